// The NetworkPolicy agent of the project's test node: kube-network-policies' controller (the agent
// kind runs), as a process beside the node's other components instead of a DaemonSet. Its own
// command reads only the in-cluster configuration; this one takes the node's kubeconfig, which is
// all that differs. The controller keeps a table of its own in nftables and hands the first packet
// of every new connection from or to a pod to an nfqueue, where it decides by the NetworkPolicies.
package main

import (
	"context"
	"flag"
	"fmt"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus/promhttp"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/klog/v2"
	"sigs.k8s.io/kube-network-policies/pkg/networkpolicy"
)

func main() {
	kubeconfig := flag.String("kubeconfig", "", "the node's kubeconfig")
	nodeName := flag.String("node-name", "localhost", "the name of the node whose pods it polices")
	queueID := flag.Int("nfqueue-id", 100, "the nfqueue that packets wait in for a verdict")
	metrics := flag.String("metrics-bind-address", "127.0.0.1:0", "where /metrics is served")
	klog.InitFlags(nil)
	flag.Parse()
	if *kubeconfig == "" {
		fmt.Fprintln(os.Stderr, "network-policies: --kubeconfig is required")
		os.Exit(2)
	}
	os.Exit(run(*kubeconfig, *nodeName, *queueID, *metrics))
}

func run(kubeconfig, nodeName string, queueID int, metrics string) int {
	ctx, cancel := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer cancel()

	config, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		klog.ErrorS(err, "Reading the kubeconfig failed", "path", kubeconfig)
		return 1
	}
	client, err := kubernetes.NewForConfig(config)
	if err != nil {
		klog.ErrorS(err, "Creating the client failed")
		return 1
	}
	factory := informers.NewSharedInformerFactory(client, 0)
	controller, err := networkpolicy.NewController(
		client,
		factory.Networking().V1().NetworkPolicies(),
		factory.Core().V1().Namespaces(),
		factory.Core().V1().Pods(),
		nil, nil, nil, nil, // no AdminNetworkPolicy: the chart ships standard NetworkPolicies only
		networkpolicy.Config{
			QueueID:  queueID,
			NodeName: nodeName,
			// Fail closed: a packet that finds no agent is dropped, so a test never passes because the agent was away.
			FailOpen: false,
			// Kernels from 6.12 on have the conntrack fix this works around (the test machines run 6.x);
			// with it, DNS to the node's own dnsmasq would be policed at PREROUTING as if it were a pod.
			NetfilterBug1766Fix: false,
			// containerd 1.6 on the node has no NRI, so pod addresses come from the API server. The NRI
			// plugin stays on all the same: with it off, v0.8.0 dereferences its nil plugin for every
			// address that is no pod's (the node, a page outside) and crashes; on, it fails to reach
			// the runtime once, logs it, and answers "no pod" for them.
			NRIdisabled: false,
		},
	)
	if err != nil {
		klog.ErrorS(err, "Creating the NetworkPolicy controller failed")
		return 1
	}
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.Handler())
	go func() { klog.ErrorS(http.ListenAndServe(metrics, mux), "The metrics server stopped") }()
	go func() {
		if err := controller.Run(ctx); err != nil {
			klog.ErrorS(err, "The NetworkPolicy controller stopped")
			cancel()
		}
	}()
	factory.Start(ctx.Done())
	klog.InfoS("Started", "node", nodeName, "nfqueue", queueID)
	<-ctx.Done()
	// The controller removes its nftables table on the way out.
	time.Sleep(2 * time.Second)
	return 0
}
