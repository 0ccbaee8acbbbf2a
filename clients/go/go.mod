module github.com/viewfinder/viewfinder/clients/go

go 1.26
