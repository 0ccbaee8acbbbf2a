package viewfinder_test

import (
	"bytes"
	"fmt"
	"html"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/viewfinder/viewfinder/clients/go"
)

// The Go examples of README.md and of docs/clients.md's Go section, built as a user would (a module
// of their own that requires this one through a replace directive, as the install section says)
// and run as written against the real service, the base URL and keys given in the environment
// variables they read.

var goBlock = regexp.MustCompile("(?s)```go\n(.*?)```")

// snippets are the Go blocks of a file (of its "## Go" section only, for docs/clients.md), by the
// file name each one's first line gives: "// first-capture.go: ...".
func snippets(t *testing.T) map[string][]string {
	t.Helper()
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	docs, err := os.ReadFile(filepath.Join(repoRoot, "docs", "clients.md"))
	if err != nil {
		t.Fatal(err)
	}
	section := string(docs)
	start := strings.Index(section, "\n## Go\n")
	if start < 0 {
		t.Fatal("docs/clients.md has no ## Go section")
	}
	section = section[start+len("\n## Go\n"):]
	if end := strings.Index(section, "\n## "); end >= 0 {
		section = section[:end]
	}
	found := map[string][]string{}
	for source, text := range map[string]string{"README.md": string(readme), "docs/clients.md": section} {
		blocks := goBlock.FindAllStringSubmatch(text, -1)
		if len(blocks) == 0 {
			t.Errorf("%s has no Go example", source)
		}
		for _, block := range blocks {
			name, _, _ := strings.Cut(strings.TrimPrefix(block[1], "// "), ":")
			if !strings.HasSuffix(name, ".go") || !strings.Contains(block[1], "package main") {
				t.Errorf("%s: every Go block is a whole program whose first line names it (// name.go: ...); this one starts %q", source, name)
				continue
			}
			if !containsString(found[name], block[1]) {
				found[name] = append(found[name], block[1])
			}
		}
	}
	return found
}

func containsString(list []string, s string) bool {
	for _, item := range list {
		if item == s {
			return true
		}
	}
	return false
}

// program is an example built into a binary, in a folder of its own where it runs.
type program struct {
	dir, binary string
}

func build(t *testing.T, source string) program {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "main.go"), []byte(source), 0o644); err != nil {
		t.Fatal(err)
	}
	module, _ := filepath.Abs(".")
	for _, args := range [][]string{
		{"mod", "init", "example.com/snippet"},
		{"mod", "edit", "-require=github.com/viewfinder/viewfinder/clients/go@v0.0.0", "-replace=github.com/viewfinder/viewfinder/clients/go=" + module},
		{"build", "-o", "example", "."},
	} {
		cmd := exec.Command("go", args...)
		cmd.Dir = dir
		// Nothing may be downloaded: the module needs nothing but the standard library.
		cmd.Env = append(os.Environ(), "GOPROXY=off", "GOFLAGS=", "GOTOOLCHAIN=local")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	return program{dir: dir, binary: filepath.Join(dir, "example")}
}

// output is a program's stdout and stderr together, safe to read while it runs.
type output struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (o *output) Write(p []byte) (int, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.buf.Write(p)
}

func (o *output) String() string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.buf.String()
}

func (p program) start(t *testing.T, env ...string) (*exec.Cmd, *output) {
	t.Helper()
	out := &output{}
	cmd := exec.Command(p.binary)
	cmd.Dir, cmd.Stdout, cmd.Stderr = p.dir, out, out
	cmd.Env = append(os.Environ(), env...)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	return cmd, out
}

func (p program) run(t *testing.T, env ...string) string {
	t.Helper()
	cmd, out := p.start(t, env...)
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("the example failed: %v\n%s", err, out)
		}
	case <-time.After(4 * time.Minute):
		_ = cmd.Process.Kill()
		t.Fatalf("the example did not finish in 4 minutes:\n%s", out)
	}
	return out.String()
}

func waitForOutput(t *testing.T, out *output, pattern string) string {
	t.Helper()
	re := regexp.MustCompile(pattern)
	deadline := time.Now().Add(3 * time.Minute)
	for time.Now().Before(deadline) {
		if m := re.FindString(out.String()); m != "" {
			return m
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("no %q in the output:\n%s", pattern, out)
	return ""
}

func fileIsPNG(t *testing.T, path string) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil || !isPNG(data) {
		t.Errorf("%s is not a PNG (%v)", filepath.Base(path), err)
	}
}

func freeAddress(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

func TestDocumentationExamples(t *testing.T) {
	_, siteKey := newSiteKey(t, "go-docs")
	hosted := []string{"VIEWFINDER_URL=" + service.Hosted.Base, "VIEWFINDER_API_KEY=" + siteKey.Secret, "PAGE_URL=" + service.Pages.Page}
	scenarios := map[string]func(t *testing.T, p program){
		"first-capture.go": func(t *testing.T, p program) {
			p.run(t, hosted...)
			fileIsPNG(t, filepath.Join(p.dir, "screenshot.png"))
		},
		"self-hosted.go": func(t *testing.T, p program) {
			p.run(t, "VIEWFINDER_URL="+service.SelfHosted.Base, "VIEWFINDER_API_KEY="+service.SelfHosted.APIKey, "PAGE_URL="+service.Pages.Page)
			fileIsPNG(t, filepath.Join(p.dir, "screenshot.png"))
		},
		"async.go": func(t *testing.T, p program) {
			out := p.run(t, hosted...)
			id := regexp.MustCompile(`saved (job_\w+)\.png`).FindStringSubmatch(out)
			if id == nil {
				t.Fatalf("no saved image in:\n%s", out)
			}
			fileIsPNG(t, filepath.Join(p.dir, id[1]+".png"))
		},
		"render-link.go": func(t *testing.T, p program) {
			out := p.run(t, "VIEWFINDER_URL="+service.Hosted.Base, "VIEWFINDER_KEY_ID="+siteKey.ID, "VIEWFINDER_SIGNING_SECRET="+siteKey.SigningSecret, "PAGE_URL="+service.Pages.Page)
			src := regexp.MustCompile(`<img src="([^"]+)"`).FindStringSubmatch(out)
			if src == nil {
				t.Fatalf("no <img> in %q", out)
			}
			res, err := http.Get(html.UnescapeString(src[1]))
			if err != nil {
				t.Fatal(err)
			}
			defer res.Body.Close()
			body, _ := io.ReadAll(res.Body)
			if res.StatusCode != 200 || !isPNG(body) {
				t.Errorf("the <img> link answered %d %s", res.StatusCode, res.Header.Get("Content-Type"))
			}
		},
		"webhook-receiver.go": func(t *testing.T, p program) {
			addr := freeAddress(t)
			cmd, out := p.start(t, append(hosted, "WEBHOOK_ADDR="+addr, "VIEWFINDER_SIGNING_SECRET="+siteKey.SigningSecret)...)
			defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
			waitForOutput(t, out, "listening on")
			// A forgery is refused.
			forged := `{"id":"job_forged","event":"capture.succeeded","status":"succeeded"}`
			req, _ := http.NewRequest(http.MethodPost, "http://"+addr+"/viewfinder", strings.NewReader(forged))
			req.Header.Set(viewfinder.SignatureHeader, viewfinder.SignWebhook([]byte(forged), "not the secret", time.Now()))
			if res, err := http.DefaultClient.Do(req); err != nil || res.StatusCode != 400 {
				t.Errorf("a forged delivery: %v %v", res, err)
			}
			waitForOutput(t, out, "refused: ")
			// A capture whose webhook the service delivers to the example.
			client := viewfinder.NewClient(service.Hosted.Base, siteKey.Secret)
			ctx := ctxFor(t, 3*time.Minute)
			accepted, err := client.Captures.Submit(ctx, &viewfinder.SubmitParams{
				CaptureOptions: viewfinder.CaptureOptions{URL: service.Pages.Page},
				WebhookURL:     "http://" + addr + "/viewfinder",
			})
			if err != nil {
				t.Fatal(err)
			}
			waitForOutput(t, out, "verified capture.succeeded for "+accepted.ID)
			waitForOutput(t, out, "saved "+accepted.ID+".png")
			fileIsPNG(t, filepath.Join(p.dir, accepted.ID+".png"))
		},
		"errors.go": func(t *testing.T, p program) {
			if out := p.run(t, hosted...); !strings.Contains(out, "the service answered 400: Invalid URL") {
				t.Errorf("unexpected output:\n%s", out)
			}
		},
		"management.go": func(t *testing.T, p program) {
			out := p.run(t, "VIEWFINDER_URL="+service.Hosted.Base, "VIEWFINDER_API_KEY="+service.Hosted.Key, "PAGE_URL="+service.Pages.Page)
			for _, want := range []string{"page home is baseline", "baseline of home: ", "the monitor captured 1 page(s)"} {
				if !strings.Contains(out, want) {
					t.Errorf("no %q in the output:\n%s", want, out)
				}
			}
		},
	}
	for name, sources := range snippets(t) {
		scenario, ok := scenarios[name]
		if !ok {
			t.Errorf("%s: an example this test does not know how to run; add its scenario", name)
			continue
		}
		for i, source := range sources {
			t.Run(fmt.Sprintf("%s#%d", name, i+1), func(t *testing.T) { scenario(t, build(t, source)) })
		}
	}
}
