// Package viewfinder is the Go client of Viewfinder, the screenshot service
// (https://github.com/viewfinder/viewfinder).
//
// One Client holds the service's base URL, the API key, a per-attempt timeout and a retry budget;
// its fields group the calls by area, as the API does:
//
//		client := viewfinder.NewClient("https://viewfinder.example.com", os.Getenv("VIEWFINDER_API_KEY"))
//		shot, err := client.Captures.Create(ctx, &viewfinder.CaptureOptions{URL: "https://example.com/"})
//
//	  - Captures: synchronous captures (the JSON answer or the image bytes), asynchronous ones
//	    (submit, batch, poll, wait), in hosted mode (/api/...) or self-hosted mode (WithSelfHosted).
//	  - Sites, Keys, Monitors, Usage: the hosted management API (a full-access key).
//	  - RenderLinks and SignRenderLink: signed render links for an <img src>.
//	  - ConstructWebhookEvent: a webhook's raw body and Viewfinder-Signature header in, a verified
//	    event out.
//
// Every call takes a context.Context first: its deadline and cancellation bound the whole call,
// retries included. Errors the service answers are *Error values, which errors.Is matches against
// the kinds (ErrRateLimited, ErrAuthentication, ...); 429 and 503 are retried with backoff,
// honouring Retry-After. No error text ever holds the API key.
package viewfinder
