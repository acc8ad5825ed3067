package client

import (
	"context"
	"iter"
	"net/http"
	"time"

	"github.com/leadline/leadline/apikit"
	"github.com/leadline/leadline/enrollments"
	"github.com/leadline/leadline/inbox"
	"github.com/leadline/leadline/leads"
	"github.com/leadline/leadline/reports"
	"github.com/leadline/leadline/senders"
	"github.com/leadline/leadline/sequences"
	"github.com/leadline/leadline/server"
	"github.com/leadline/leadline/tasks"
	"github.com/leadline/leadline/webhooks"
)

// Every method is named after its operation's operationId in
// /v1/openapi.json (list-leads is ListLeads); the All… methods iterate
// over every page of a list. The coverage test holds the client to the
// document.

// data is the {"data": …} answer.
type data[T any] struct {
	Data T `json:"data"`
}

// get sends a GET and returns the answer's data.
func get[T any](ctx context.Context, c *Client, path string, params any) (T, error) {
	var out data[T]
	err := c.do(ctx, call{method: http.MethodGet, path: path, query: queryOf(params)}, &out)
	return out.Data, err
}

// send sends a write and returns the answer's data.
func send[T any](ctx context.Context, c *Client, method, path string, body any) (T, error) {
	var out data[T]
	err := c.do(ctx, call{method: method, path: path, body: body}, &out)
	return out.Data, err
}

// page sends a list's GET.
func page[T any](ctx context.Context, c *Client, path string, params any) (*apikit.Page[T], error) {
	var out apikit.Page[T]
	if err := c.do(ctx, call{method: http.MethodGet, path: path, query: queryOf(params)}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Meta

// GetMe returns the key's context: its workspace, role, client scope, and
// the clients, stages, tags and lists it may use.
func (c *Client) GetMe(ctx context.Context) (*server.Me, error) {
	return get[*server.Me](ctx, c, "/v1/me", nil)
}

// GetMetricDefinitions returns every metric reports use, by key.
func (c *Client) GetMetricDefinitions(ctx context.Context) (map[string]reports.Definition, error) {
	return get[map[string]reports.Definition](ctx, c, "/v1/metrics/definitions", nil)
}

// Leads

// LeadsParams filter ListLeads.
type LeadsParams struct {
	Q                string    `query:"q"`
	ClientID         string    `query:"client_id"`
	ListID           string    `query:"list_id"`
	StageID          string    `query:"stage_id"`
	TagID            string    `query:"tag_id"`
	Source           string    `query:"source"`
	Email            string    `query:"email"`
	PublicIdentifier string    `query:"public_identifier"`
	UpdatedSince     time.Time `query:"updated_since"`
	Replied          *bool     `query:"replied"`
	Enriched         *bool     `query:"enriched"`
	PageParams
}

// ListLeads returns one page of the leads the key sees, newest first.
func (c *Client) ListLeads(ctx context.Context, p LeadsParams) (*apikit.Page[leads.Lead], error) {
	return page[leads.Lead](ctx, c, "/v1/leads", p)
}

// AllLeads iterates over every lead ListLeads would page through.
func (c *Client) AllLeads(ctx context.Context, p LeadsParams) iter.Seq2[leads.Lead, error] {
	return all(ctx, p, c.ListLeads)
}

// Upserted is the answer to UpsertLead and PatchLead.
type Upserted struct {
	Data *leads.LeadDetail `json:"data"`
	// Created is true when no lead matched and this one was created.
	Created bool `json:"created"`
	// UnchangedFields are fields sent with a value that was kept, because
	// they are filled only when empty.
	UnchangedFields []string `json:"unchanged_fields"`
}

// UpsertLead creates a lead or updates the one it matches.
func (c *Client) UpsertLead(ctx context.Context, in leads.LeadInput) (*Upserted, error) {
	var out Upserted
	if err := c.do(ctx, call{method: http.MethodPost, path: "/v1/leads", body: in}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// GetLead returns a lead with its tags, profile, sender states and
// enrollments.
func (c *Client) GetLead(ctx context.Context, id string) (*leads.LeadDetail, error) {
	return get[*leads.LeadDetail](ctx, c, pathOf("/v1/leads/{id}", id), nil)
}

// PatchLead updates a lead by id.
func (c *Client) PatchLead(ctx context.Context, id string, in leads.LeadInput) (*Upserted, error) {
	var out Upserted
	if err := c.do(ctx, call{method: http.MethodPatch, path: pathOf("/v1/leads/{id}", id), body: in}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// TagLead adds 1 to 20 tags to a lead.
func (c *Client) TagLead(ctx context.Context, id string, tagIDs ...string) (*leads.LeadDetail, error) {
	body := struct {
		TagIDs []string `json:"tag_ids"`
	}{tagIDs}
	return send[*leads.LeadDetail](ctx, c, http.MethodPost, pathOf("/v1/leads/{id}/tags", id), body)
}

// UntagLead removes a tag from a lead.
func (c *Client) UntagLead(ctx context.Context, id, tagID string) (*leads.LeadDetail, error) {
	return send[*leads.LeadDetail](ctx, c, http.MethodDelete, pathOf("/v1/leads/{id}/tags/{tag_id}", id, tagID), nil)
}

// SetLeadStage sets a lead's stage; nil clears it.
func (c *Client) SetLeadStage(ctx context.Context, id string, stageID *string) (*leads.LeadDetail, error) {
	body := struct {
		StageID *string `json:"stage_id"`
	}{stageID}
	return send[*leads.LeadDetail](ctx, c, http.MethodPut, pathOf("/v1/leads/{id}/stage", id), body)
}

// SetLeadList sets a lead's list; nil clears it.
func (c *Client) SetLeadList(ctx context.Context, id string, listID *string) (*leads.LeadDetail, error) {
	body := struct {
		ListID *string `json:"list_id"`
	}{listID}
	return send[*leads.LeadDetail](ctx, c, http.MethodPut, pathOf("/v1/leads/{id}/list", id), body)
}

// SuppressLead marks a lead do-not-contact.
func (c *Client) SuppressLead(ctx context.Context, id string) (*leads.LeadDetail, error) {
	return send[*leads.LeadDetail](ctx, c, http.MethodPost, pathOf("/v1/leads/{id}/suppress", id), nil)
}

// UnsuppressLead clears a lead's do-not-contact mark.
func (c *Client) UnsuppressLead(ctx context.Context, id string) (*leads.LeadDetail, error) {
	return send[*leads.LeadDetail](ctx, c, http.MethodDelete, pathOf("/v1/leads/{id}/suppress", id), nil)
}

// TimelineParams bound GetLeadTimeline.
type TimelineParams struct {
	Limit int `query:"limit"` // the newest events to return (default 200)
}

// GetLeadTimeline returns a lead's activity, newest first.
func (c *Client) GetLeadTimeline(ctx context.Context, id string, p TimelineParams) ([]leads.TimelineEvent, error) {
	return get[[]leads.TimelineEvent](ctx, c, pathOf("/v1/leads/{id}/timeline", id), p)
}

// EnrichLeads queues profile enrichment of 1 to 5000 leads.
func (c *Client) EnrichLeads(ctx context.Context, in leads.EnrichInput) (*leads.EnrichResult, error) {
	return send[*leads.EnrichResult](ctx, c, http.MethodPost, "/v1/leads/enrich", in)
}

// AddSuppressions adds workspace-wide do-not-contact entries.
func (c *Client) AddSuppressions(ctx context.Context, in leads.SuppressionsInput) (*leads.SuppressionsResult, error) {
	return send[*leads.SuppressionsResult](ctx, c, http.MethodPost, "/v1/suppressions", in)
}

// Enrollments

// PreviewEnrollments says which leads would be enrolled, which not and
// why, and when; it changes nothing.
func (c *Client) PreviewEnrollments(ctx context.Context, in enrollments.EnrollInput) (*enrollments.Preview, error) {
	return send[*enrollments.Preview](ctx, c, http.MethodPost, "/v1/enrollments/preview", in)
}

// EnrolLeads enrols the eligible leads of in; in.Confirm must be true.
func (c *Client) EnrolLeads(ctx context.Context, in enrollments.EnrollInput) (*enrollments.CommitResult, error) {
	return send[*enrollments.CommitResult](ctx, c, http.MethodPost, "/v1/enrollments", in)
}

// EnrollmentsParams filter ListEnrollments.
type EnrollmentsParams struct {
	SequenceID string `query:"sequence_id"`
	LeadID     string `query:"lead_id"`
	SenderID   string `query:"sender_id"`
	Status     string `query:"status"`
	PageParams
}

// ListEnrollments returns one page of enrollments, newest first.
func (c *Client) ListEnrollments(ctx context.Context, p EnrollmentsParams) (*apikit.Page[enrollments.Enrollment], error) {
	return page[enrollments.Enrollment](ctx, c, "/v1/enrollments", p)
}

// AllEnrollments iterates over every enrollment ListEnrollments would page
// through.
func (c *Client) AllEnrollments(ctx context.Context, p EnrollmentsParams) iter.Seq2[enrollments.Enrollment, error] {
	return all(ctx, p, c.ListEnrollments)
}

// PauseEnrollment pauses an active enrollment.
func (c *Client) PauseEnrollment(ctx context.Context, id string) (*enrollments.Enrollment, error) {
	return send[*enrollments.Enrollment](ctx, c, http.MethodPost, pathOf("/v1/enrollments/{id}/pause", id), nil)
}

// ResumeEnrollment resumes a paused enrollment.
func (c *Client) ResumeEnrollment(ctx context.Context, id string) (*enrollments.Enrollment, error) {
	return send[*enrollments.Enrollment](ctx, c, http.MethodPost, pathOf("/v1/enrollments/{id}/resume", id), nil)
}

// ExitEnrollment ends an enrollment.
func (c *Client) ExitEnrollment(ctx context.Context, id string) (*enrollments.Enrollment, error) {
	return send[*enrollments.Enrollment](ctx, c, http.MethodPost, pathOf("/v1/enrollments/{id}/exit", id), nil)
}

// RecoverEnrollments runs the failed step of failed enrollments again and
// returns how many do.
func (c *Client) RecoverEnrollments(ctx context.Context, in enrollments.RecoverInput) (int, error) {
	out, err := send[struct {
		Recovered int `json:"recovered"`
	}](ctx, c, http.MethodPost, "/v1/enrollments/recover", in)
	return out.Recovered, err
}

// GetSequenceStats returns a sequence's numbers per step and status.
func (c *Client) GetSequenceStats(ctx context.Context, id string) (*enrollments.SequenceStats, error) {
	return get[*enrollments.SequenceStats](ctx, c, pathOf("/v1/sequences/{id}/stats", id), nil)
}

// ListSequenceFailed returns one page of a sequence's failed enrollments.
func (c *Client) ListSequenceFailed(ctx context.Context, id string, p PageParams) (*apikit.Page[enrollments.FailedEnrollment], error) {
	return page[enrollments.FailedEnrollment](ctx, c, pathOf("/v1/sequences/{id}/failed", id), p)
}

// AllSequenceFailed iterates over every failed enrollment of a sequence.
func (c *Client) AllSequenceFailed(ctx context.Context, id string, p PageParams) iter.Seq2[enrollments.FailedEnrollment, error] {
	return all(ctx, p, func(ctx context.Context, p PageParams) (*apikit.Page[enrollments.FailedEnrollment], error) {
		return c.ListSequenceFailed(ctx, id, p)
	})
}

// WhyNotSending returns every cause that holds a sequence back.
func (c *Client) WhyNotSending(ctx context.Context, id string) (*enrollments.WhyNotSending, error) {
	return get[*enrollments.WhyNotSending](ctx, c, pathOf("/v1/sequences/{id}/why-not-sending", id), nil)
}

// GetSenderCapacity returns a sender's capacity for its next 7 days.
func (c *Client) GetSenderCapacity(ctx context.Context, id string) ([]enrollments.DayCapacity, error) {
	return get[[]enrollments.DayCapacity](ctx, c, pathOf("/v1/senders/{id}/capacity", id), nil)
}

// Senders

// SendersParams filter ListSenders.
type SendersParams struct {
	ClientID string `query:"client_id"`
	Channel  string `query:"channel"`
	Status   string `query:"status"`
	PageParams
}

// ListSenders returns one page of the senders the key sees.
func (c *Client) ListSenders(ctx context.Context, p SendersParams) (*apikit.Page[senders.Sender], error) {
	return page[senders.Sender](ctx, c, "/v1/senders", p)
}

// AllSenders iterates over every sender ListSenders would page through.
func (c *Client) AllSenders(ctx context.Context, p SendersParams) iter.Seq2[senders.Sender, error] {
	return all(ctx, p, c.ListSenders)
}

// GetSender returns a sender.
func (c *Client) GetSender(ctx context.Context, id string) (*senders.Sender, error) {
	return get[*senders.Sender](ctx, c, pathOf("/v1/senders/{id}", id), nil)
}

// GetSenderHealth returns a sender's health and its reasons.
func (c *Client) GetSenderHealth(ctx context.Context, id string) (*senders.HealthView, error) {
	return get[*senders.HealthView](ctx, c, pathOf("/v1/senders/{id}/health", id), nil)
}

// GetSenderBudgets returns a sender's budgets for its local today.
func (c *Client) GetSenderBudgets(ctx context.Context, id string) (*senders.Budgets, error) {
	return get[*senders.Budgets](ctx, c, pathOf("/v1/senders/{id}/budgets", id), nil)
}

// Sequences

// SequencesParams filter ListSequences.
type SequencesParams struct {
	ClientID string `query:"client_id"`
	Status   string `query:"status"`
	PageParams
}

// ListSequences returns one page of the sequences the key sees.
func (c *Client) ListSequences(ctx context.Context, p SequencesParams) (*apikit.Page[sequences.SequenceView], error) {
	return page[sequences.SequenceView](ctx, c, "/v1/sequences", p)
}

// AllSequences iterates over every sequence ListSequences would page
// through.
func (c *Client) AllSequences(ctx context.Context, p SequencesParams) iter.Seq2[sequences.SequenceView, error] {
	return all(ctx, p, c.ListSequences)
}

// GetSequence returns a sequence with its steps, senders, rules (OnReply,
// OnMeetingBooked) and problems.
func (c *Client) GetSequence(ctx context.Context, id string) (*sequences.SequenceView, error) {
	return get[*sequences.SequenceView](ctx, c, pathOf("/v1/sequences/{id}", id), nil)
}

// RenderSequence renders every step of a sequence that sends a text for
// one lead, as the runner would send it; it changes nothing.
func (c *Client) RenderSequence(ctx context.Context, id, leadID string) (*sequences.Rendering, error) {
	return send[*sequences.Rendering](ctx, c, http.MethodPost, pathOf("/v1/sequences/{id}/render", id), sequences.RenderInput{LeadID: leadID})
}

// PickVariantWinner makes a step's variant the one every enrollment
// reaching the step gets from now on.
func (c *Client) PickVariantWinner(ctx context.Context, id, stepID, variantID string) (*sequences.SequenceView, error) {
	return send[*sequences.SequenceView](ctx, c, http.MethodPost, pathOf("/v1/sequences/{id}/steps/{step_id}/winner", id, stepID),
		sequences.PickInput{VariantID: variantID})
}

// UndoVariantWinner undoes a step's winner: the step splits its traffic
// by weight again.
func (c *Client) UndoVariantWinner(ctx context.Context, id, stepID string) (*sequences.SequenceView, error) {
	return send[*sequences.SequenceView](ctx, c, http.MethodDelete, pathOf("/v1/sequences/{id}/steps/{step_id}/winner", id, stepID), nil)
}

// ActivateSequence starts (or resumes) a sequence's sending.
func (c *Client) ActivateSequence(ctx context.Context, id string) (*sequences.SequenceView, error) {
	return send[*sequences.SequenceView](ctx, c, http.MethodPost, pathOf("/v1/sequences/{id}/activate", id), nil)
}

// PauseSequence stops a sequence's sending.
func (c *Client) PauseSequence(ctx context.Context, id string) (*sequences.SequenceView, error) {
	return send[*sequences.SequenceView](ctx, c, http.MethodPost, pathOf("/v1/sequences/{id}/pause", id), nil)
}

// Tasks

// TasksParams filter ListTasks.
type TasksParams struct {
	Status     string    `query:"status"`
	AssigneeID string    `query:"assignee_id"` // a member id, or "none"
	SequenceID string    `query:"sequence_id"`
	LeadID     string    `query:"lead_id"`
	ClientID   string    `query:"client_id"`
	DueBefore  time.Time `query:"due_before"`
	PageParams
}

// ListTasks returns one page of tasks, the earliest due first.
func (c *Client) ListTasks(ctx context.Context, p TasksParams) (*apikit.Page[tasks.Task], error) {
	return page[tasks.Task](ctx, c, "/v1/tasks", p)
}

// AllTasks iterates over every task ListTasks would page through.
func (c *Client) AllTasks(ctx context.Context, p TasksParams) iter.Seq2[tasks.Task, error] {
	return all(ctx, p, c.ListTasks)
}

// GetTask returns a task.
func (c *Client) GetTask(ctx context.Context, id string) (*tasks.Task, error) {
	return get[*tasks.Task](ctx, c, pathOf("/v1/tasks/{id}", id), nil)
}

// CompleteTask closes an open task and moves its enrollment on.
func (c *Client) CompleteTask(ctx context.Context, id string, in tasks.CompleteInput) (*tasks.Task, error) {
	return send[*tasks.Task](ctx, c, http.MethodPost, pathOf("/v1/tasks/{id}/complete", id), in)
}

// SetTaskAssignee assigns a task to a member; nil unassigns it.
func (c *Client) SetTaskAssignee(ctx context.Context, id string, memberID *string) (*tasks.Task, error) {
	return send[*tasks.Task](ctx, c, http.MethodPut, pathOf("/v1/tasks/{id}/assignee", id), assigneeBody{memberID})
}

// assigneeBody is the body of the assignee operations.
type assigneeBody struct {
	AssigneeID *string `json:"assignee_id"`
}

// Inbox

// ThreadsParams filter ListThreads.
type ThreadsParams struct {
	Intent       string    `query:"intent"`
	AssigneeID   string    `query:"assignee_id"` // a member id, or "none"
	SenderID     string    `query:"sender_id"`
	SequenceID   string    `query:"sequence_id"`
	ClientID     string    `query:"client_id"`
	LeadID       string    `query:"lead_id"`
	Unread       *bool     `query:"unread"`
	NeedsReview  *bool     `query:"needs_review"`
	UpdatedSince time.Time `query:"updated_since"`
	PageParams
}

// ListThreads returns one page of the inbox, newest activity first.
func (c *Client) ListThreads(ctx context.Context, p ThreadsParams) (*apikit.Page[inbox.Thread], error) {
	return page[inbox.Thread](ctx, c, "/v1/threads", p)
}

// AllThreads iterates over every thread ListThreads would page through.
func (c *Client) AllThreads(ctx context.Context, p ThreadsParams) iter.Seq2[inbox.Thread, error] {
	return all(ctx, p, c.ListThreads)
}

// GetThread returns a thread with its messages, oldest first, and what
// the sequences' rules did on it (Rules).
func (c *Client) GetThread(ctx context.Context, id string) (*inbox.ThreadView, error) {
	return get[*inbox.ThreadView](ctx, c, pathOf("/v1/threads/{id}", id), nil)
}

// ReplyToThread sends a message in a thread now.
func (c *Client) ReplyToThread(ctx context.Context, id string, in inbox.ReplyInput) (*inbox.Message, error) {
	return send[*inbox.Message](ctx, c, http.MethodPost, pathOf("/v1/threads/{id}/reply", id), in)
}

// SetThreadIntent sets a thread's intent by hand.
func (c *Client) SetThreadIntent(ctx context.Context, id string, intent inbox.Intent) (*inbox.Thread, error) {
	body := struct {
		Intent inbox.Intent `json:"intent"`
	}{intent}
	return send[*inbox.Thread](ctx, c, http.MethodPut, pathOf("/v1/threads/{id}/intent", id), body)
}

// SetThreadAssignee assigns a thread to a member; nil unassigns it.
func (c *Client) SetThreadAssignee(ctx context.Context, id string, memberID *string) (*inbox.Thread, error) {
	return send[*inbox.Thread](ctx, c, http.MethodPut, pathOf("/v1/threads/{id}/assignee", id), assigneeBody{memberID})
}

// MarkThreadRead marks a thread read.
func (c *Client) MarkThreadRead(ctx context.Context, id string) (*inbox.Thread, error) {
	return send[*inbox.Thread](ctx, c, http.MethodPost, pathOf("/v1/threads/{id}/read", id), nil)
}

// Webhooks

// ListWebhookEventKinds returns every event type a webhook can subscribe
// to.
func (c *Client) ListWebhookEventKinds(ctx context.Context) ([]webhooks.Kind, error) {
	return get[[]webhooks.Kind](ctx, c, "/v1/webhooks/event-kinds", nil)
}

// CreateWebhook subscribes an endpoint; the answer carries the signing
// secret, shown only this once.
func (c *Client) CreateWebhook(ctx context.Context, in webhooks.CreateInput) (*webhooks.Created, error) {
	return send[*webhooks.Created](ctx, c, http.MethodPost, "/v1/webhooks", in)
}

// ListWebhooks returns one page of the workspace's webhooks.
func (c *Client) ListWebhooks(ctx context.Context, p PageParams) (*apikit.Page[webhooks.Webhook], error) {
	return page[webhooks.Webhook](ctx, c, "/v1/webhooks", p)
}

// AllWebhooks iterates over every webhook.
func (c *Client) AllWebhooks(ctx context.Context, p PageParams) iter.Seq2[webhooks.Webhook, error] {
	return all(ctx, p, c.ListWebhooks)
}

// DeleteWebhook deletes a webhook.
func (c *Client) DeleteWebhook(ctx context.Context, id string) (*webhooks.Webhook, error) {
	return send[*webhooks.Webhook](ctx, c, http.MethodDelete, pathOf("/v1/webhooks/{id}", id), nil)
}

// EnableWebhook turns a switched-off webhook back on.
func (c *Client) EnableWebhook(ctx context.Context, id string) (*webhooks.Webhook, error) {
	return send[*webhooks.Webhook](ctx, c, http.MethodPost, pathOf("/v1/webhooks/{id}/enable", id), nil)
}

// DeliveriesParams filter ListWebhookDeliveries.
type DeliveriesParams struct {
	WebhookID string `query:"webhook_id"`
	Status    string `query:"status"`
}

// ListWebhookDeliveries returns the latest 100 deliveries.
func (c *Client) ListWebhookDeliveries(ctx context.Context, p DeliveriesParams) ([]webhooks.Delivery, error) {
	return get[[]webhooks.Delivery](ctx, c, "/v1/webhooks/deliveries", p)
}

// ReplayWebhookDelivery sends a delivery's payload again, as a new
// delivery.
func (c *Client) ReplayWebhookDelivery(ctx context.Context, id string) (*webhooks.Delivery, error) {
	return send[*webhooks.Delivery](ctx, c, http.MethodPost, pathOf("/v1/webhooks/deliveries/{id}/replay", id), nil)
}

// Reports

// ReportParams are every report's period and filters. Dates are local
// dates (YYYY-MM-DD) in the workspace's timezone.
type ReportParams struct {
	From       string `query:"from"`
	To         string `query:"to"`
	ClientID   string `query:"client_id"`
	SequenceID string `query:"sequence_id"`
	SenderID   string `query:"sender_id"`
	Channel    string `query:"channel"`
}

// SeriesParams add a series interval ("day" or "week").
type SeriesParams struct {
	ReportParams
	Interval string `query:"interval"`
}

// ReportPageParams add a page.
type ReportPageParams struct {
	ReportParams
	PageParams
}

// ReportListParams add a sort: a metric key, with - in front for largest
// first.
type ReportListParams struct {
	ReportParams
	PageParams
	Sort string `query:"sort"`
}

// ReportOverview returns every metric over the period, with a series.
func (c *Client) ReportOverview(ctx context.Context, p SeriesParams) (*reports.Report, error) {
	return get[*reports.Report](ctx, c, "/v1/reports/overview", p)
}

// ReportFunnel returns the funnel with its conversions.
func (c *Client) ReportFunnel(ctx context.Context, p ReportParams) (*reports.Funnel, error) {
	return get[*reports.Funnel](ctx, c, "/v1/reports/funnel", p)
}

// ReportIntents returns replies per intent.
func (c *Client) ReportIntents(ctx context.Context, p ReportParams) (*reports.Intents, error) {
	return get[*reports.Intents](ctx, c, "/v1/reports/intents", p)
}

// ReportReplyThreads returns one page of the threads whose first reply
// came in the period.
func (c *Client) ReportReplyThreads(ctx context.Context, p ReportPageParams) (*apikit.Page[reports.ReplyThread], error) {
	return page[reports.ReplyThread](ctx, c, "/v1/reports/reply-threads", p)
}

// AllReportReplyThreads iterates over every thread ReportReplyThreads
// would page through.
func (c *Client) AllReportReplyThreads(ctx context.Context, p ReportPageParams) iter.Seq2[reports.ReplyThread, error] {
	return all(ctx, p, c.ReportReplyThreads)
}

// ReportCost returns the cost report.
func (c *Client) ReportCost(ctx context.Context, p ReportParams) (*reports.Cost, error) {
	return get[*reports.Cost](ctx, c, "/v1/reports/cost", p)
}

// ReportSequences returns one page of rows, one per sequence.
func (c *Client) ReportSequences(ctx context.Context, p ReportListParams) (*apikit.Page[reports.Row], error) {
	return page[reports.Row](ctx, c, "/v1/reports/sequences", p)
}

// ReportSenders returns one page of rows, one per sender.
func (c *Client) ReportSenders(ctx context.Context, p ReportListParams) (*apikit.Page[reports.Row], error) {
	return page[reports.Row](ctx, c, "/v1/reports/senders", p)
}

// ReportClients returns one page of rows, one per client.
func (c *Client) ReportClients(ctx context.Context, p ReportListParams) (*apikit.Page[reports.Row], error) {
	return page[reports.Row](ctx, c, "/v1/reports/clients", p)
}

// AllReportRows iterates over every row of the report per kind:
// "sequences", "senders" or "clients".
func (c *Client) AllReportRows(ctx context.Context, kind string, p ReportListParams) iter.Seq2[reports.Row, error] {
	return all(ctx, p, func(ctx context.Context, p ReportListParams) (*apikit.Page[reports.Row], error) {
		return page[reports.Row](ctx, c, "/v1/reports/"+kind, p)
	})
}

// ReportSequence returns one sequence's metrics with a series.
func (c *Client) ReportSequence(ctx context.Context, id string, p SeriesParams) (*reports.Subject, error) {
	return get[*reports.Subject](ctx, c, pathOf("/v1/reports/sequences/{id}", id), p)
}

// ReportSender returns one sender's metrics with a series.
func (c *Client) ReportSender(ctx context.Context, id string, p SeriesParams) (*reports.Subject, error) {
	return get[*reports.Subject](ctx, c, pathOf("/v1/reports/senders/{id}", id), p)
}

// ReportClient returns one client's metrics with a series.
func (c *Client) ReportClient(ctx context.Context, id string, p SeriesParams) (*reports.Subject, error) {
	return get[*reports.Subject](ctx, c, pathOf("/v1/reports/clients/{id}", id), p)
}

// Inbound webhooks: these carry a provider's signature instead of an API
// key. They are here for relays and tests that forward a provider's
// delivery as it came.

// BookingReceived is the answer to a scheduling provider's webhook.
type BookingReceived struct {
	Booked    bool    `json:"booked"`
	BookingID string  `json:"booking_id,omitempty"`
	LeadID    *string `json:"lead_id"`
	New       *bool   `json:"new,omitempty"`
}

// ReceiveBookingWebhook forwards a Cal.com ("calcom") or Calendly
// ("calendly") webhook for a workspace, with its signature headers.
func (c *Client) ReceiveBookingWebhook(ctx context.Context, provider, workspaceID string, header http.Header, body []byte) (*BookingReceived, error) {
	var out data[*BookingReceived]
	err := c.do(ctx, call{method: http.MethodPost, path: pathOf("/inbound/{provider}/{workspace_id}", provider, workspaceID),
		raw: body, header: withJSON(header)}, &out)
	return out.Data, err
}

// UnipileReceived is the answer to a Unipile webhook.
type UnipileReceived struct {
	Reports int `json:"reports"`
	Queued  int `json:"queued"`
}

// ReceiveUnipileWebhook forwards a Unipile webhook with its signature
// header.
func (c *Client) ReceiveUnipileWebhook(ctx context.Context, header http.Header, body []byte) (*UnipileReceived, error) {
	var out data[*UnipileReceived]
	err := c.do(ctx, call{method: http.MethodPost, path: "/inbound/unipile", raw: body, header: withJSON(header)}, &out)
	return out.Data, err
}

func withJSON(h http.Header) http.Header {
	h = h.Clone()
	if h == nil {
		h = http.Header{}
	}
	if h.Get("Content-Type") == "" {
		h.Set("Content-Type", "application/json")
	}
	return h
}

// ImportParams are the options of a CSV import.
type ImportParams struct {
	ClientID string   `query:"client_id"`
	TagIDs   []string `query:"tag_id"`
	Maps     []string `query:"map"`
	DryRun   bool     `query:"dry_run"`
}

// ImportLeads uploads a CSV file (at most 100 MiB) to import in the
// background; poll the job with GetImport until its status is no longer
// running.
func (c *Client) ImportLeads(ctx context.Context, csv []byte, p ImportParams) (*leads.ImportJob, error) {
	var out data[*leads.ImportJob]
	err := c.do(ctx, call{method: http.MethodPost, path: "/v1/leads/import", query: queryOf(p), file: csv, contentType: "text/csv"}, &out)
	return out.Data, err
}

// GetImport returns an import job: its status, counts and one page of its
// rejected rows (the first 100 when p is zero); the job's Rejected says
// how many there are in all.
func (c *Client) GetImport(ctx context.Context, id string, p PageParams) (*leads.ImportJob, error) {
	return get[*leads.ImportJob](ctx, c, pathOf("/v1/imports/{id}", id), p)
}

// DownloadImportRejected returns every rejected row of an import as a CSV
// file: line,code,reason, in line order.
func (c *Client) DownloadImportRejected(ctx context.Context, id string) ([]byte, error) {
	var out []byte
	err := c.do(ctx, call{method: http.MethodGet, path: pathOf("/v1/imports/{id}/rejected.csv", id)}, &out)
	return out, err
}
