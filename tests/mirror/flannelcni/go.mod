module mooring.lab/flannelcni

go 1.25.0
