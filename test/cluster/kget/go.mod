module viewfinder.dev/test-cluster/kget

go 1.26.0
