// Command ferretdb is the MongoDB-compatible server the tests run the store's MongoDB paths on:
// FerretDB v1 through its embeddable package (the module's own cmd/ferretdb needs a version file
// that only FerretDB's repository generates). test/cluster/ferretdb.sh starts and stops it.
//
//	ferretdb -listen 127.0.0.1:27017 -handler sqlite -sqlite-url file:/state/data/
//	ferretdb -listen 127.0.0.1:27017 -handler postgresql -postgresql-url postgres://...
package main

import (
	"context"
	"flag"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/FerretDB/FerretDB/ferretdb"
)

func main() {
	listen := flag.String("listen", "127.0.0.1:27017", "TCP address to listen on")
	handler := flag.String("handler", "sqlite", "backend: sqlite or postgresql")
	sqliteURL := flag.String("sqlite-url", "", "SQLite directory URI, for example file:/state/data/")
	postgresqlURL := flag.String("postgresql-url", "", "PostgreSQL connection string")
	level := flag.String("log-level", "warn", "debug, info, warn or error")
	flag.Parse()

	var logLevel slog.Level
	if err := logLevel.UnmarshalText([]byte(*level)); err != nil {
		fail(err)
	}
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: logLevel}))

	server, err := ferretdb.New(&ferretdb.Config{
		Listener:      ferretdb.ListenerConfig{TCP: *listen},
		Logger:        logger,
		Handler:       *handler,
		SQLiteURL:     *sqliteURL,
		PostgreSQLURL: *postgresqlURL,
	})
	if err != nil {
		fail(err)
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	// Run returns when ctx is done (a clean stop) or when the listener fails.
	if err := server.Run(ctx); err != nil && ctx.Err() == nil {
		fail(err)
	}
}

func fail(err error) {
	slog.Error("ferretdb: " + err.Error())
	os.Exit(1)
}
