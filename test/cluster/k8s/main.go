// Command k8s is the test cluster's Kubernetes: one binary, built from the k8s.io/kubernetes module,
// that runs the component its first argument (or the name it was started as) names. One binary links
// the shared code once: about 150 MB instead of six binaries of 60 to 120 MB each.
//
//	k8s kube-apiserver --etcd-servers=...
//	ln -s k8s kubectl && ./kubectl get nodes
package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	_ "time/tzdata" // CronJob time zones, as the upstream mains import it

	"github.com/spf13/cobra"
	"k8s.io/component-base/cli"
	"k8s.io/component-base/logs"
	_ "k8s.io/component-base/logs/json/register"
	_ "k8s.io/component-base/metrics/prometheus/clientgo"
	_ "k8s.io/component-base/metrics/prometheus/version"
	kubectl "k8s.io/kubectl/pkg/cmd"
	kubectlutil "k8s.io/kubectl/pkg/cmd/util"
	apiserver "k8s.io/kubernetes/cmd/kube-apiserver/app"
	controllermanager "k8s.io/kubernetes/cmd/kube-controller-manager/app"
	proxy "k8s.io/kubernetes/cmd/kube-proxy/app"
	scheduler "k8s.io/kubernetes/cmd/kube-scheduler/app"
	kubelet "k8s.io/kubernetes/cmd/kubelet/app"

	_ "k8s.io/client-go/plugin/pkg/client/auth"
)

var components = map[string]func() *cobra.Command{
	"kube-apiserver":          apiserver.NewAPIServerCommand,
	"kube-controller-manager": controllermanager.NewControllerManagerCommand,
	"kube-scheduler":          func() *cobra.Command { return scheduler.NewSchedulerCommand() },
	"kubelet":                 func() *cobra.Command { return kubelet.NewKubeletCommand(context.Background()) },
	"kube-proxy":              proxy.NewProxyCommand,
}

func main() {
	name := filepath.Base(os.Args[0])
	if name == "kubectl" || (len(os.Args) > 1 && os.Args[1] == "kubectl") {
		if name != "kubectl" {
			os.Args = os.Args[1:]
		}
		runKubectl()
		return
	}
	newCommand, ok := components[name]
	if !ok && len(os.Args) > 1 {
		newCommand, ok = components[os.Args[1]]
		os.Args = os.Args[1:]
	}
	if !ok {
		names := []string{"kubectl"}
		for component := range components {
			names = append(names, component)
		}
		sort.Strings(names)
		fmt.Fprintf(os.Stderr, "usage: k8s COMPONENT [FLAGS]; COMPONENT is one of %v\n", names)
		os.Exit(2)
	}
	os.Exit(cli.Run(newCommand()))
}

func runKubectl() {
	logs.GlogSetter(kubectl.GetLogVerbosity(os.Args)) // nolint:errcheck
	if err := cli.RunNoErrOutput(kubectl.NewDefaultKubectlCommand()); err != nil {
		kubectlutil.CheckErr(err)
	}
}
