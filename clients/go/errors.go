package viewfinder

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"
)

// The kinds of errors the service answers. An *Error matches the kind of its status with
// errors.Is:
//
//	if errors.Is(err, viewfinder.ErrRateLimited) { ... }
var (
	// ErrInvalidRequest: 400, and the other answers that say the request itself is wrong and will
	// not change by sending it again (405, 406, 413, 415, 431).
	ErrInvalidRequest = errors.New("viewfinder: invalid request")
	// ErrAuthentication: 401, no key, an unknown one, or one regenerated or deleted since.
	ErrAuthentication = errors.New("viewfinder: authentication failed")
	// ErrPermission: 403, a key that may not do this (a site key on the management API, a domain
	// outside a restricted key's site, an address the network guard refuses, an expired link).
	ErrPermission = errors.New("viewfinder: permission denied")
	// ErrNotFound: 404, no such site, key, monitor or capture in this account (or no such route).
	ErrNotFound = errors.New("viewfinder: not found")
	// ErrConflict: 409, e.g. an object owned by Kubernetes, or the image of a capture not yet done.
	ErrConflict = errors.New("viewfinder: conflict")
	// ErrCaptureTimeout: 408, the page did not load, or the capture did not finish, in time.
	ErrCaptureTimeout = errors.New("viewfinder: capture timed out")
	// ErrRateLimited: 429, the key's rate limit or the render queue is full; see Error.RetryAfter.
	ErrRateLimited = errors.New("viewfinder: rate limited")
	// ErrAPI: a 5xx answer, the service failed (a capture that failed, no renderer ready...).
	ErrAPI = errors.New("viewfinder: service error")
)

// Error is an answer of the service that is not a success: its status, the server's message
// ("error" in the JSON body) and, for 429 and 503, how long the server asked to wait.
// It never holds the API key.
type Error struct {
	// Status is the HTTP status code.
	Status int
	// Message is the server's own text, e.g. "URL is required".
	Message string
	// RetryAfter is the Retry-After the server sent (0 when none).
	RetryAfter time.Duration
	// Method and Path name the request, e.g. "POST" and "/api/screenshot".
	Method, Path string
}

func (e *Error) Error() string {
	text := fmt.Sprintf("viewfinder: %s %s: %d %s", e.Method, e.Path, e.Status, http.StatusText(e.Status))
	if e.Message != "" {
		text += ": " + e.Message
	}
	if e.RetryAfter > 0 {
		text += fmt.Sprintf(" (retry after %s)", e.RetryAfter)
	}
	return text
}

// kinds are the sentinels of the statuses that have one of their own; the other 4xx are
// ErrInvalidRequest, the 5xx ErrAPI.
var kinds = map[int]error{
	http.StatusUnauthorized:    ErrAuthentication,
	http.StatusForbidden:       ErrPermission,
	http.StatusNotFound:        ErrNotFound,
	http.StatusConflict:        ErrConflict,
	http.StatusRequestTimeout:  ErrCaptureTimeout,
	http.StatusTooManyRequests: ErrRateLimited,
}

// Kind is the sentinel this error's status belongs to (ErrRateLimited, ErrNotFound, ...).
func (e *Error) Kind() error {
	if kind, ok := kinds[e.Status]; ok {
		return kind
	}
	if e.Status >= 500 {
		return ErrAPI
	}
	return ErrInvalidRequest
}

// Is makes errors.Is(err, ErrRateLimited) and the like true for an *Error of that kind.
func (e *Error) Is(target error) bool { return target == e.Kind() }

// IsRateLimited reports whether err is a 429 answer (after any retries).
func IsRateLimited(err error) bool { return errors.Is(err, ErrRateLimited) }

// IsAuthentication reports whether err is a 401 answer: a missing, unknown or revoked key.
func IsAuthentication(err error) bool { return errors.Is(err, ErrAuthentication) }

// IsNotFound reports whether err is a 404 answer.
func IsNotFound(err error) bool { return errors.Is(err, ErrNotFound) }

// IsInvalidRequest reports whether err says the request itself is wrong (400 and the like).
func IsInvalidRequest(err error) bool { return errors.Is(err, ErrInvalidRequest) }

// errorFromResponse reads the service's error shape, {"error": "..."} (with "success": false
// except on 401), redacting the key should a message ever contain it.
func errorFromResponse(method, path string, res *http.Response, body []byte, key string) *Error {
	e := &Error{Status: res.StatusCode, Method: method, Path: path, RetryAfter: parseRetryAfter(res.Header.Get("Retry-After"), time.Now())}
	var shape struct {
		Error string `json:"error"`
	}
	if json.Unmarshal(body, &shape) == nil && shape.Error != "" {
		e.Message = shape.Error
	} else {
		e.Message = strings.TrimSpace(string(body))
		if len(e.Message) > 200 {
			e.Message = e.Message[:200] + "…"
		}
	}
	e.Message = redact(e.Message, key)
	return e
}

func redact(text, key string) string {
	if key == "" {
		return text
	}
	return strings.ReplaceAll(text, key, "[redacted]")
}
