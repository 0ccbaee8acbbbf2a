package viewfinder_test

import (
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/viewfinder/viewfinder/clients/go"
)

func TestSites(t *testing.T) {
	client := hostedClient()
	ctx := ctxFor(t, time.Minute)
	site, err := client.Sites.Create(ctx, &viewfinder.SiteCreateParams{Name: "go-shop", AllowedDomains: []string{"example.com", "*.example.org"}})
	if err != nil {
		t.Fatalf("Create: %v", err)
	}
	if site.Name != "go-shop" || !slices.Equal(site.AllowedDomains, []string{"example.com", "example.org"}) {
		t.Errorf("created %+v", site)
	}
	sites, err := client.Sites.List(ctx)
	if err != nil || !slices.ContainsFunc(sites, func(s viewfinder.Site) bool { return s.ID == site.ID }) {
		t.Errorf("List: %v, %v", sites, err)
	}
	got, err := client.Sites.Get(ctx, site.ID)
	if err != nil || got.ID != site.ID {
		t.Errorf("Get: %+v, %v", got, err)
	}
	updated, err := client.Sites.Update(ctx, site.ID, &viewfinder.SiteUpdateParams{AllowedDomains: []string{"shop.example.net"}})
	if err != nil || !slices.Equal(updated.AllowedDomains, []string{"shop.example.net"}) || updated.Name != "go-shop" {
		t.Errorf("Update domains: %+v, %v", updated, err)
	}
	renamed, err := client.Sites.Update(ctx, site.ID, &viewfinder.SiteUpdateParams{Name: viewfinder.String("go-shop-2")})
	if err != nil || renamed.Name != "go-shop-2" || !slices.Equal(renamed.AllowedDomains, []string{"shop.example.net"}) {
		t.Errorf("Update name: %+v, %v", renamed, err)
	}
	emptied, err := client.Sites.Update(ctx, site.ID, &viewfinder.SiteUpdateParams{AllowedDomains: []string{}})
	if err != nil || len(emptied.AllowedDomains) != 0 {
		t.Errorf("Update to no domains: %+v, %v", emptied, err)
	}
	if err := client.Sites.Delete(ctx, site.ID); err != nil {
		t.Fatalf("Delete: %v", err)
	}
	if _, err := client.Sites.Get(ctx, site.ID); !viewfinder.IsNotFound(err) {
		t.Errorf("Get after Delete: want a 404, got %v", err)
	}
}

func TestKeys(t *testing.T) {
	client := hostedClient()
	ctx := ctxFor(t, 2*time.Minute)
	site := newSite(t, "go-keys")
	key, err := client.Keys.Create(ctx, &viewfinder.KeyCreateParams{Name: "go-widget", SiteID: site.ID, RestrictDomains: true})
	if err != nil {
		t.Fatalf("Create: %v", err)
	}
	if key.Kind != "site" || key.SiteID == nil || *key.SiteID != site.ID || !key.RestrictDomains || key.Secret == "" || key.SigningSecret == "" {
		t.Errorf("created %+v", key.Key)
	}
	keys, err := client.Keys.List(ctx)
	if err != nil || !slices.ContainsFunc(keys, func(k viewfinder.Key) bool { return k.ID == key.ID }) {
		t.Errorf("List: %v, %v", keys, err)
	}
	regenerated, err := client.Keys.Regenerate(ctx, key.ID)
	if err != nil || regenerated.ID != key.ID || regenerated.Secret == key.Secret || regenerated.SigningSecret == key.SigningSecret {
		t.Fatalf("Regenerate: %v", err)
	}
	// The old key stops working at once; the new one works (a site key sees its own site's captures: 404 for an unknown one).
	if _, err := viewfinder.NewClient(service.Hosted.Base, key.Secret).Captures.Get(ctx, "job_unknown"); !viewfinder.IsAuthentication(err) {
		t.Errorf("the old key: want a 401, got %v", err)
	}
	if _, err := viewfinder.NewClient(service.Hosted.Base, regenerated.Secret).Captures.Get(ctx, "job_unknown"); !viewfinder.IsNotFound(err) {
		t.Errorf("the new key: want a 404 for an unknown capture, got %v", err)
	}
	if err := client.Keys.Delete(ctx, key.ID); err != nil {
		t.Fatalf("Delete: %v", err)
	}
	if err := client.Keys.Delete(ctx, key.ID); !viewfinder.IsNotFound(err) {
		t.Errorf("Delete again: want a 404, got %v", err)
	}
}

func TestMonitorsAndUsage(t *testing.T) {
	client := hostedClient()
	ctx := ctxFor(t, 4*time.Minute)
	monitor, err := client.Monitors.Create(ctx, &viewfinder.MonitorParams{
		Name:     "go-storefront",
		Schedule: "@yearly",
		Suspend:  true,
		Compare:  &viewfinder.MonitorCompare{Threshold: viewfinder.Float(0.01)},
		Pages:    []viewfinder.MonitorPage{{Name: "home", URL: service.Pages.Page, HideSelectors: []string{".clock"}}},
	})
	if err != nil {
		t.Fatalf("Create: %v", err)
	}
	t.Cleanup(func() { _ = client.Monitors.Delete(t.Context(), monitor.ID) })
	if !monitor.Suspend || monitor.Compare.Threshold == nil || *monitor.Compare.Threshold != 0.01 || len(monitor.Pages) != 1 {
		t.Errorf("created %+v", monitor)
	}
	monitors, err := client.Monitors.List(ctx)
	if err != nil || !slices.ContainsFunc(monitors, func(m viewfinder.Monitor) bool { return m.ID == monitor.ID }) {
		t.Errorf("List: %v", err)
	}
	if updated, err := client.Monitors.Update(ctx, monitor.ID, &viewfinder.MonitorUpdateParams{HistoryLimit: 5, Suspend: viewfinder.Bool(true)}); err != nil || updated.HistoryLimit != 5 {
		t.Errorf("Update: %+v, %v", updated, err)
	}

	jobID, err := client.Monitors.RunNow(ctx, monitor.ID)
	if err != nil || jobID == "" {
		t.Fatalf("RunNow: %q, %v", jobID, err)
	}
	var runs []viewfinder.MonitorRun
	for len(runs) == 0 {
		if runs, err = client.Monitors.Runs(ctx, monitor.ID); err != nil {
			t.Fatalf("Runs: %v", err)
		}
		select {
		case <-ctx.Done():
			t.Fatal("the run never finished")
		case <-time.After(300 * time.Millisecond):
		}
	}
	run := runs[0]
	if run.Trigger != "manual" || len(run.Pages) != 1 || run.Pages[0].Outcome != "baseline" || run.Pages[0].CaptureImageID == nil || run.Pages[0].Verdict != nil {
		t.Fatalf("the first run: %+v", run)
	}
	withReports, err := client.Monitors.GetRun(ctx, monitor.ID, run.ID)
	if err != nil || len(withReports.Pages) != 1 || withReports.Pages[0].Report == nil || withReports.Pages[0].Report.Document.Status == nil || *withReports.Pages[0].Report.Document.Status != 200 {
		t.Fatalf("GetRun: %+v, %v", withReports, err)
	}
	accepted, err := client.Monitors.AcceptBaseline(ctx, monitor.ID, &viewfinder.BaselineParams{RunID: run.ID, Page: "home"})
	if err != nil || accepted.Baselines["home"] == "" {
		t.Fatalf("AcceptBaseline: %+v, %v", accepted, err)
	}
	picture, err := client.Monitors.Image(ctx, monitor.ID, accepted.Baselines["home"])
	if err != nil || !isPNG(picture) {
		t.Errorf("Image: %v", err)
	}
	got, err := client.Monitors.Get(ctx, monitor.ID)
	if err != nil || got.Baselines["home"] != accepted.Baselines["home"] {
		t.Errorf("Get: %+v, %v", got, err)
	}

	usage, err := client.Usage.Get(ctx)
	if err != nil {
		t.Fatalf("Usage: %v", err)
	}
	if usage.Monitors[monitor.ID].Captures < 1 {
		t.Errorf("usage does not count the monitor's capture: %+v", usage.Monitors)
	}

	if err := client.Monitors.Delete(ctx, monitor.ID); err != nil {
		t.Fatalf("Delete: %v", err)
	}
	if _, err := client.Monitors.Get(ctx, monitor.ID); !errors.Is(err, viewfinder.ErrNotFound) {
		t.Errorf("Get after Delete: want ErrNotFound, got %v", err)
	}
}
