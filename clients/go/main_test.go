package viewfinder_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/viewfinder/viewfinder/clients/go"
)

// service is what test/clients/serve-for-clients.ts started: a hosted service with an account and
// its full-access key, a self-hosted one, a busy one (one render slot, no queue) and a page server.
var service struct {
	Hosted struct {
		Base, AccountID, Key, KeyID, SigningSecret string
	}
	SelfHosted struct{ Base, APIKey string }
	Busy       struct{ Base string }
	Pages      struct{ Base, Page, Slow, Hook, Hooks string }
}

// repoRoot is the repository's root: this package lives in clients/go.
var repoRoot, _ = filepath.Abs(filepath.Join("..", ".."))

func TestMain(m *testing.M) {
	stop, err := func() (func(), error) {
		// A service already running (its JSON line), for working on the tests: not what make test does.
		if line := os.Getenv("VIEWFINDER_TEST_SERVICE"); line != "" {
			return func() {}, json.Unmarshal([]byte(line), &service)
		}
		return startService()
	}()
	if err != nil {
		fmt.Fprintf(os.Stderr, "viewfinder tests: %v\n", err)
		os.Exit(1)
	}
	code := m.Run()
	stop()
	os.Exit(code)
}

// startService starts serve-for-clients.ts with Node 22 or newer (VIEWFINDER_NODE, else node on
// PATH), reads the one JSON line it prints, and answers how to stop it: close its stdin.
func startService() (func(), error) {
	node := os.Getenv("VIEWFINDER_NODE")
	if node == "" {
		node = "node"
	}
	out, err := exec.Command(node, "--version").Output()
	if err != nil {
		return nil, fmt.Errorf("no Node to run the service (%s): %v; set VIEWFINDER_NODE to Node 22 or newer", node, err)
	}
	if major, _ := strconv.Atoi(regexp.MustCompile(`^v(\d+)`).FindStringSubmatch(strings.TrimSpace(string(out)) + " v0")[1]); major < 22 {
		return nil, fmt.Errorf("%s is Node %s; the service needs 22 or newer: set VIEWFINDER_NODE (this checkout has tools/node/node_modules/node/bin/node)", node, strings.TrimSpace(string(out)))
	}
	cmd := exec.Command(node, filepath.Join("test", "clients", "serve-for-clients.ts"))
	cmd.Dir = repoRoot
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	logFile, err := os.CreateTemp("", "viewfinder-go-service-*.log")
	if err != nil {
		return nil, err
	}
	cmd.Stderr = logFile
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	stop := func() {
		stdin.Close()
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
		logFile.Close()
		os.Remove(logFile.Name())
	}
	line := make(chan string, 1)
	go func() {
		reader := bufio.NewReader(stdout)
		text, _ := reader.ReadString('\n')
		line <- text
		_, _ = io.Copy(io.Discard, reader)
	}()
	select {
	case text := <-line:
		if err := json.Unmarshal([]byte(text), &service); err != nil || service.Hosted.Base == "" {
			log, _ := os.ReadFile(logFile.Name())
			stop()
			return nil, fmt.Errorf("serve-for-clients.ts printed %q (%v); its stderr:\n%s", text, err, log)
		}
		return stop, nil
	case <-time.After(4 * time.Minute):
		log, _ := os.ReadFile(logFile.Name())
		stop()
		return nil, fmt.Errorf("serve-for-clients.ts printed nothing in 4 minutes; its stderr:\n%s", log)
	}
}

// ctxFor is a context that ends with the test, bounded generously (the machine is shared).
func ctxFor(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(t.Context(), d)
	t.Cleanup(cancel)
	return ctx
}

func hostedClient(opts ...viewfinder.Option) *viewfinder.Client {
	return viewfinder.NewClient(service.Hosted.Base, service.Hosted.Key, opts...)
}

func selfHostedClient(opts ...viewfinder.Option) *viewfinder.Client {
	return viewfinder.NewClient(service.SelfHosted.Base, service.SelfHosted.APIKey, append([]viewfinder.Option{viewfinder.WithSelfHosted()}, opts...)...)
}

// newSite makes a site with no allowed domains (its keys are not restricted), deleted after the test.
func newSite(t *testing.T, name string) *viewfinder.Site {
	t.Helper()
	client := hostedClient()
	site, err := client.Sites.Create(ctxFor(t, time.Minute), &viewfinder.SiteCreateParams{Name: name, AllowedDomains: []string{}})
	if err != nil {
		t.Fatalf("Sites.Create: %v", err)
	}
	t.Cleanup(func() { _ = client.Sites.Delete(context.Background(), site.ID) })
	return site
}

// newSiteKey makes a site and a key scoped to it.
func newSiteKey(t *testing.T, name string) (*viewfinder.Site, *viewfinder.IssuedKey) {
	t.Helper()
	site := newSite(t, name)
	key, err := hostedClient().Keys.Create(ctxFor(t, time.Minute), &viewfinder.KeyCreateParams{Name: name, SiteID: site.ID})
	if err != nil {
		t.Fatalf("Keys.Create: %v", err)
	}
	return site, key
}

var pngMagic = []byte("\x89PNG\r\n\x1a\n")

func isPNG(data []byte) bool { return len(data) > 8 && string(data[:8]) == string(pngMagic) }

// countingTransport records the status of every answer a client got.
type countingTransport struct {
	statuses []int
	requests []*http.Request
	onStatus func(status int)
}

func (c *countingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	c.requests = append(c.requests, req)
	res, err := http.DefaultTransport.RoundTrip(req)
	if err == nil {
		c.statuses = append(c.statuses, res.StatusCode)
		if c.onStatus != nil {
			c.onStatus(res.StatusCode)
		}
	}
	return res, err
}
