// Command kget fetches a URL from inside a pod as a client of the API server does: it trusts the
// pod's service-account CA and sends its token. The node's test image carries it because busybox's
// wget cannot complete a TLS handshake with a current API server (no cipher suite in common).
//
//	kget https://kubernetes.default.svc/version
package main

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"time"
)

const serviceAccount = "/var/run/secrets/kubernetes.io/serviceaccount/"

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: kget URL")
		os.Exit(2)
	}
	roots := x509.NewCertPool()
	if ca, err := os.ReadFile(serviceAccount + "ca.crt"); err == nil {
		roots.AppendCertsFromPEM(ca)
	}
	client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: roots}}}
	request, err := http.NewRequest(http.MethodGet, os.Args[1], nil)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	if token, err := os.ReadFile(serviceAccount + "token"); err == nil {
		request.Header.Set("Authorization", "Bearer "+strings.TrimSpace(string(token)))
	}
	response, err := client.Do(request)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	defer response.Body.Close()
	if _, err := io.Copy(os.Stdout, response.Body); err != nil || response.StatusCode != http.StatusOK {
		fmt.Fprintf(os.Stderr, "%s: HTTP %d %v\n", os.Args[1], response.StatusCode, err)
		os.Exit(1)
	}
}
