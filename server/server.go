// Package server is the only place in leadline that knows HTTP. It mounts
// huma operations for every area under /v1 on a net/http ServeMux, and
// wraps them with authentication, rate limits, idempotency, request ids and
// access logs.
package server

import (
	"cmp"
	"context"
	"log/slog"
	"net/http"
	"time"

	"github.com/danielgtaylor/huma/v2"
	"github.com/danielgtaylor/huma/v2/adapters/humago"

	"github.com/leadline/leadline/apikit"
	"github.com/leadline/leadline/bookings"
	"github.com/leadline/leadline/engine"
	"github.com/leadline/leadline/enrollments"
	"github.com/leadline/leadline/events"
	"github.com/leadline/leadline/inbox"
	"github.com/leadline/leadline/internal/db"
	"github.com/leadline/leadline/internal/secret"
	"github.com/leadline/leadline/leads"
	"github.com/leadline/leadline/platform"
	"github.com/leadline/leadline/reports"
	"github.com/leadline/leadline/senders"
	"github.com/leadline/leadline/sequences"
	"github.com/leadline/leadline/tasks"
	"github.com/leadline/leadline/webhooks"
	"github.com/leadline/leadline/workspace"
)

// Version is the version of the interface description.
const Version = "1.0.0"

// Config is what a Server needs: a Platform, or a DB to build one on.
type Config struct {
	// Platform is the wired areas the API serves (package platform). When
	// it is nil, New builds one from DB, Clock, Logger, Transports and
	// Webhooks.
	Platform *platform.Platform
	DB       *db.DB
	Clock    apikit.Clock // default: the platform's clock, or the system clock
	Logger   *slog.Logger // default: slog.Default()
	Limits   RateLimits   // default: DefaultRateLimits
	// Transports are what members' replies go through, for a platform New
	// builds.
	Transports map[string]senders.Transport
	// Webhooks decides which webhook endpoints may be reached, for a
	// platform New builds; the zero value allows public addresses only.
	Webhooks webhooks.Guard
	// Credentials give the secrets senders' settings name (a unipile
	// sender's webhook secret); default: the platform's SenderSecrets
	// (a stored secret, else the environment variable).
	Credentials senders.Credentials
	// SecretKey seals what the server keeps secret: webhook signing
	// secrets, scheduling providers' secrets and stored idempotent answers.
	// The zero Key is none: webhooks are then refused (E_CONFLICT).
	SecretKey secret.Key
	// MaxUploadBytes is the largest file POST /v1/leads/import takes
	// (default DefaultMaxUpload, 100 MiB); other bodies are at most 2 MiB.
	MaxUploadBytes int64
}

// Server is leadline's HTTP API.
type Server struct {
	db          *db.DB
	clock       apikit.Clock
	logger      *slog.Logger
	workspaces  *workspace.Service
	events      *events.Log
	leads       *leads.Service
	senders     *senders.Service
	sequences   *sequences.Service
	enrollments *enrollments.Service
	tasks       *tasks.Service
	inbox       *inbox.Service
	webhooks    *webhooks.Service
	bookings    *bookings.Service
	inbound     *engine.Queue
	credentials senders.Credentials
	reports     *reports.Service
	limiter     *limiter
	idem        *idempotency
	mux         *http.ServeMux
	api         huma.API
	// secretKey opens unsubscribe tokens.
	secretKey secret.Key
	// schemasPath is where huma serves each schema of the document.
	schemasPath string
	// metrics counts requests and refusals (metrics.go); nil: none.
	metrics Metrics
	// maxUpload is the largest file an upload operation takes.
	maxUpload int64
	// webhookSecrets keeps the unipile senders' webhook secrets a short
	// while, so that a flood of unsigned webhooks reads no secret twice a
	// minute.
	webhookSecrets secretCache
}

// New builds the API on cfg.Platform, or on a platform on cfg.DB. The
// database must be migrated.
func New(cfg Config) *Server {
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Limits == (RateLimits{}) {
		cfg.Limits = DefaultRateLimits
	}
	pl := cfg.Platform
	if pl == nil {
		pl = platform.New(platform.Config{DB: cfg.DB, Clock: cfg.Clock, Logger: cfg.Logger, Webhooks: cfg.Webhooks, Transports: cfg.Transports,
			SecretKey: cfg.SecretKey})
	}
	cfg.DB, cfg.Clock, cfg.SecretKey = pl.DB, pl.Clock, pl.SecretKey
	if cfg.Credentials == nil {
		cfg.Credentials = pl.SenderSecrets
	}
	s := &Server{
		db: cfg.DB, clock: cfg.Clock, logger: cfg.Logger,
		workspaces: pl.Workspaces, events: pl.Log,
		leads:       pl.Leads,
		senders:     pl.Senders,
		sequences:   pl.Sequences,
		enrollments: pl.Enrollments,
		tasks:       pl.Tasks,
		inbox:       pl.Inbox,
		webhooks:    pl.Webhooks,
		bookings:    pl.Bookings,
		inbound:     pl.Inbound,
		credentials: cfg.Credentials,
		reports:     pl.Reports,
		limiter:     newLimiter(cfg.DB, cfg.Clock, cfg.Limits),
		idem:        newIdempotency(cfg.DB, cfg.Clock, cfg.SecretKey),
		secretKey:   cfg.SecretKey,
		mux:         http.NewServeMux(),
		maxUpload:   cmp.Or(cfg.MaxUploadBytes, DefaultMaxUpload),
	}
	if pl.Metrics != nil {
		s.metrics = pl.Metrics
	}

	hc := huma.DefaultConfig("leadline", Version)
	hc.CreateHooks = nil // no $schema links: bodies are exactly the documented shapes
	hc.OpenAPIPath = "/v1/openapi"
	hc.DocsPath = "" // served from the binary, with no CDN (docs.go)
	hc.SchemasPath = "/v1/schemas"
	s.schemasPath = hc.SchemasPath
	hc.RejectUnknownQueryParameters = true
	hc.Transformers = append(hc.Transformers, stampRequestID)
	// JSON only, decoded strictly (json.go): no second format whose decoder
	// would skip those checks.
	hc.Formats = map[string]huma.Format{"application/json": jsonFormat, "json": jsonFormat}
	hc.Info.Description = "leadline moves leads in, enrols them in LinkedIn and email sequences, reads replies and reports. " +
		"Every call needs an API key, sent as `Authorization: Bearer <key>` or `X-API-Key: <key>`."
	hc.Components.SecuritySchemes = map[string]*huma.SecurityScheme{
		"bearer": {Type: "http", Scheme: "bearer", Description: "An API key as `Authorization: Bearer <key>`."},
		"apiKey": {Type: "apiKey", In: "header", Name: "X-API-Key", Description: "An API key as `X-API-Key: <key>`."},
	}
	describeDocument(hc.OpenAPI)
	s.api = humago.New(s.mux, hc)
	chainErrors()
	documentErrorsAsEnvelope(s.api)
	s.api.UseMiddleware(s.nameOperation, s.guard)

	s.mux.HandleFunc("GET /healthz", s.healthz)
	s.registerDocs(hc.OpenAPIPath)
	s.mux.HandleFunc("POST /inbound/{provider}/{workspace}", s.inboundBooking)
	s.mux.HandleFunc("GET /unsubscribe/{token}", s.unsubscribePage)
	s.mux.HandleFunc("POST /unsubscribe/{token}", s.unsubscribe)
	s.registerInbound()
	s.documentInbound()
	s.registerMeta()
	s.registerLeads()
	s.registerSenders()
	s.registerSequences()
	s.registerWinners()
	s.registerEnrollments()
	s.registerThreads()
	s.registerTasks()
	s.registerWebhooks()
	s.registerReports()
	s.registerImports()
	s.finishSchemas()
	s.documentRequestIDs()
	s.documentExamples()
	return s
}

// API is the huma API, for programs that add operations of their own.
func (s *Server) API() huma.API { return s.api }

// Handler is the whole HTTP API: mount it at the root of a server, or
// in-process in a Go program.
func (s *Server) Handler() http.Handler {
	return s.withMetrics(s.withRequestLog(s.withEnvelopeFallback(s.mux)))
}

func (s *Server) healthz(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
	defer cancel()
	w.Header().Set("Content-Type", "application/json")
	if err := s.db.PingContext(ctx); err != nil {
		w.WriteHeader(http.StatusServiceUnavailable)
		_, _ = w.Write([]byte(`{"status":"unavailable","database":"unreachable"}`))
		return
	}
	_, _ = w.Write([]byte(`{"status":"ok"}`))
}

// Flush persists what the server keeps in memory (on SQLite, the rate
// counts). The binary calls it on shutdown; Sweep calls it too.
func (s *Server) Flush(ctx context.Context) error { return s.limiter.flush(ctx) }

// Sweep deletes ended rate windows and expired idempotency records. The
// binary runs it every few minutes; it is safe on several replicas.
func (s *Server) Sweep(ctx context.Context) error {
	if err := s.limiter.sweep(ctx); err != nil {
		return err
	}
	return s.idem.sweep(ctx)
}
