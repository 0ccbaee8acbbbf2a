// Command etcd is the test cluster's etcd, built from the go.etcd.io/etcd/server/v3 module at the
// release Kubernetes v1.37 is tested with (3.7). Debian 12's etcd-server is 3.4, which current
// Kubernetes no longer supports.
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() {
	etcdmain.Main(os.Args)
}
