// Command flannel is the lab's STAND-IN for flannel's CNI plugin (github.com/flannel-io/cni-plugin),
// whose module the Go module proxy does not serve here. It keeps the plugin's contract as
// kube-flannel.yml uses it, and nothing more: the network configuration's "delegate" is completed from
// the subnet flanneld leased to this node (/run/flannel/subnet.env) and handed to the bridge plugin
// with host-local addresses; the completed configuration is kept per container so that DEL and CHECK
// hand the same one over. Standard library only; see tests/mirror/fromsource.py.
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
)

var version = "unknown"

const maxInput = 1 << 20

var supported = []string{"0.1.0", "0.2.0", "0.3.0", "0.3.1", "0.4.0", "1.0.0", "1.1.0"}

var containerID = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$`)

type netConf struct {
	CNIVersion string                 `json:"cniVersion"`
	Name       string                 `json:"name"`
	SubnetFile string                 `json:"subnetFile"`
	DataDir    string                 `json:"dataDir"`
	Delegate   map[string]interface{} `json:"delegate"`
}

type lease struct {
	network, subnet string
	mtu             int
	ipMasq          bool
}

func main() {
	if err := run(os.Getenv("CNI_COMMAND")); err != nil {
		out, _ := json.Marshal(map[string]interface{}{"cniVersion": "1.0.0", "code": 999, "msg": err.Error()})
		fmt.Println(string(out))
		os.Exit(1)
	}
}

func run(command string) error {
	if command == "VERSION" {
		out, _ := json.Marshal(map[string]interface{}{"cniVersion": "1.0.0", "supportedVersions": supported})
		fmt.Println(string(out))
		return nil
	}
	if command == "" {
		fmt.Printf("CNI flannel plugin %s (mooring lab stand-in)\n", version)
		return nil
	}
	input, err := io.ReadAll(io.LimitReader(os.Stdin, maxInput))
	if err != nil {
		return err
	}
	var conf netConf
	if err := json.Unmarshal(input, &conf); err != nil {
		return fmt.Errorf("flannel: the network configuration is not JSON: %v", err)
	}
	if conf.SubnetFile == "" {
		conf.SubnetFile = "/run/flannel/subnet.env"
	}
	if conf.DataDir == "" {
		conf.DataDir = "/var/lib/cni/flannel"
	}
	id := os.Getenv("CNI_CONTAINERID")
	if !containerID.MatchString(id) {
		return fmt.Errorf("flannel: CNI_CONTAINERID %q is not a container id", id)
	}
	saved := filepath.Join(conf.DataDir, id)
	switch command {
	case "ADD":
		return add(conf, saved)
	case "DEL":
		return del(saved)
	case "CHECK":
		delegate, err := os.ReadFile(saved)
		if err != nil {
			return err
		}
		_, err = delegateTo(delegate, "CHECK")
		return err
	}
	return fmt.Errorf("flannel: unknown CNI_COMMAND %q", command)
}

func add(conf netConf, saved string) error {
	l, err := readLease(conf.SubnetFile)
	if err != nil {
		return err
	}
	delegate, err := json.Marshal(complete(conf, l))
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(saved), 0o700); err != nil {
		return err
	}
	if err := os.WriteFile(saved, delegate, 0o600); err != nil {
		return err
	}
	out, err := delegateTo(delegate, "ADD")
	if err != nil {
		return err
	}
	_, err = os.Stdout.Write(out)
	return err
}

func del(saved string) error {
	delegate, err := os.ReadFile(saved)
	if errors.Is(err, os.ErrNotExist) {
		return nil // never added, or already deleted
	}
	if err != nil {
		return err
	}
	if _, err := delegateTo(delegate, "DEL"); err != nil {
		return err
	}
	return os.Remove(saved)
}

// complete fills the delegate as flannel's plugin does: a bridge with this node's lease.
func complete(conf netConf, l lease) map[string]interface{} {
	d := map[string]interface{}{}
	for k, v := range conf.Delegate {
		d[k] = v
	}
	d["name"] = conf.Name
	d["cniVersion"] = conf.CNIVersion
	if _, ok := d["type"]; !ok {
		d["type"] = "bridge"
	}
	if _, ok := d["ipMasq"]; !ok {
		d["ipMasq"] = !l.ipMasq // flanneld masquerades itself when it was started with --ip-masq
	}
	if _, ok := d["mtu"]; !ok && l.mtu > 0 {
		d["mtu"] = l.mtu
	}
	if d["type"] == "bridge" {
		if _, ok := d["isGateway"]; !ok {
			d["isGateway"] = true
		}
	}
	d["ipam"] = map[string]interface{}{
		"type":   "host-local",
		"ranges": [][]map[string]string{{{"subnet": l.subnet}}}, // the lease's network (10.32.3.0/24)
		"routes": []map[string]string{{"dst": l.network}},
	}
	return d
}

func readLease(path string) (lease, error) {
	f, err := os.Open(path)
	if err != nil {
		return lease{}, fmt.Errorf("flannel: %v (is flanneld running on this node?)", err)
	}
	defer f.Close()
	var l lease
	scanner := bufio.NewScanner(io.LimitReader(f, 64<<10))
	for scanner.Scan() {
		key, value, ok := strings.Cut(strings.TrimSpace(scanner.Text()), "=")
		if !ok {
			continue
		}
		switch key {
		case "FLANNEL_NETWORK":
			l.network = value
		case "FLANNEL_SUBNET":
			l.subnet = value
		case "FLANNEL_MTU":
			l.mtu, _ = strconv.Atoi(value)
		case "FLANNEL_IPMASQ":
			l.ipMasq = value == "true"
		}
	}
	if l.network == "" || l.subnet == "" {
		return l, fmt.Errorf("flannel: %s has no FLANNEL_NETWORK or FLANNEL_SUBNET", path)
	}
	// FLANNEL_SUBNET is the node's gateway address with its prefix (10.32.3.1/24); host-local wants the network.
	_, subnet, err := net.ParseCIDR(l.subnet)
	if err != nil {
		return l, fmt.Errorf("flannel: %s: FLANNEL_SUBNET %q: %v", path, l.subnet, err)
	}
	l.subnet = subnet.String()
	return l, scanner.Err()
}

func delegateTo(conf []byte, command string) ([]byte, error) {
	var d struct {
		Type string `json:"type"`
	}
	if err := json.Unmarshal(conf, &d); err != nil || !regexp.MustCompile(`^[a-z0-9-]{1,64}$`).MatchString(d.Type) {
		return nil, fmt.Errorf("flannel: the delegate's type %q is not a plugin name", d.Type)
	}
	var plugin string
	for _, dir := range filepath.SplitList(os.Getenv("CNI_PATH")) {
		if _, err := os.Stat(filepath.Join(dir, d.Type)); err == nil {
			plugin = filepath.Join(dir, d.Type)
			break
		}
	}
	if plugin == "" {
		return nil, fmt.Errorf("flannel: plugin %q not found in CNI_PATH %q", d.Type, os.Getenv("CNI_PATH"))
	}
	cmd := exec.Command(plugin)
	cmd.Env = append(os.Environ(), "CNI_COMMAND="+command)
	cmd.Stdin = bytes.NewReader(conf)
	var stdout bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, os.Stderr
	if err := cmd.Run(); err != nil { // the delegate's own CNI error is on its stdout
		return nil, fmt.Errorf("flannel: %s %s: %v: %s", d.Type, command, err, strings.TrimSpace(stdout.String()))
	}
	return stdout.Bytes(), nil
}
