package viewfinder_test

import (
	"context"
	"fmt"
	"io"
	"log"
	"net/http"
	"os"
	"time"

	"github.com/viewfinder/viewfinder/clients/go"
)

func ExampleSignRenderLink() {
	key := viewfinder.LinkKey{ID: "key_8b1d2c3e4f5a6b7c8d9e0f1a", SigningSecret: "vfs_4f1c2a9d8e7b6c5a4f3e2d1c0b9a8f7e6d5c4b3a2f1e0d9c"}
	link := viewfinder.SignRenderLink("https://viewfinder.example.com", key, []viewfinder.LinkParam{{Name: "url", Value: "https://example.com/"}}, time.Time{})
	fmt.Println(link)
	// Output: https://viewfinder.example.com/api/render?url=https%3A%2F%2Fexample.com%2F&key=key_8b1d2c3e4f5a6b7c8d9e0f1a&signature=5aed5cf61c1eb4024c59472739f61e3584601511f94823e0660442144601a4cf
}

func ExampleConstructWebhookEvent() {
	secret := os.Getenv("VIEWFINDER_SIGNING_SECRET")
	http.HandleFunc("POST /viewfinder", func(w http.ResponseWriter, r *http.Request) {
		payload, err := io.ReadAll(http.MaxBytesReader(w, r.Body, 1<<20))
		if err != nil {
			http.Error(w, "unreadable body", http.StatusBadRequest)
			return
		}
		event, err := viewfinder.ConstructWebhookEvent(payload, r.Header.Get(viewfinder.SignatureHeader), secret)
		if err != nil {
			http.Error(w, "invalid signature", http.StatusBadRequest)
			return
		}
		log.Printf("%s for %s", event.Event, event.ID)
	})
}

func ExampleCaptureService_CreateImage() {
	client := viewfinder.NewClient(os.Getenv("VIEWFINDER_URL"), os.Getenv("VIEWFINDER_API_KEY"))
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	img, err := client.Captures.CreateImage(ctx, &viewfinder.CaptureOptions{URL: "https://example.com/", FullPage: true})
	if err != nil {
		log.Fatal(err)
	}
	_ = os.WriteFile("screenshot.png", img.Data, 0o644)
}
