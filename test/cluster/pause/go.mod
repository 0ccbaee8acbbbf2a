module viewfinder.dev/test-cluster/pause

go 1.26.0
