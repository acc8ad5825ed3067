package server

import (
	"context"
	"net/http"

	"github.com/danielgtaylor/huma/v2"

	"github.com/leadline/leadline/apikit"
	"github.com/leadline/leadline/reports"
)

// ReportPeriod are the period and filters every report takes. It and the
// inputs that embed it are exported because huma reads the query
// parameters of exported embedded structs only.
type ReportPeriod struct {
	From       string `query:"from" pattern:"^[0-9]{4}-[0-9]{2}-[0-9]{2}$" doc:"First local date (YYYY-MM-DD) in the workspace's timezone; default 29 days before to."`
	To         string `query:"to" pattern:"^[0-9]{4}-[0-9]{2}-[0-9]{2}$" doc:"Last local date, included; default today. A period covers at most 366 days."`
	ClientID   string `query:"client_id" format:"uuid" doc:"Only this client's numbers (a client-scoped key: one of its clients)."`
	SequenceID string `query:"sequence_id" format:"uuid" doc:"Only this sequence's numbers."`
	SenderID   string `query:"sender_id" format:"uuid" doc:"Only this sender's numbers."`
	Channel    string `query:"channel" enum:"linkedin,email" doc:"Only the numbers of senders on this channel."`
}

func (r ReportPeriod) params(interval string) reports.Params {
	return reports.Params{From: r.From, To: r.To, ClientID: r.ClientID, SequenceID: r.SequenceID, SenderID: r.SenderID,
		Channel: r.Channel, Interval: interval}
}

// ReportSeriesInput adds a series interval to the period.
type ReportSeriesInput struct {
	ReportPeriod
	Interval string `query:"interval" enum:"day,week" default:"day" doc:"The length of a series point; weeks start on Monday."`
}

// ReportPageInput adds a page to the period.
type ReportPageInput struct {
	ReportPeriod
	Limit  int `query:"limit" minimum:"1" maximum:"200" default:"50"`
	Offset int `query:"offset" minimum:"0" default:"0"`
}

type reportListInput struct {
	ReportPageInput
	Sort string `query:"sort" doc:"A metric key to sort by, largest last; with - in front, largest first. Default -sends.total. Null values sort last."`
}

type reportSubjectInput struct {
	ID string `path:"id" format:"uuid"`
	ReportSeriesInput
}

const reportsDoc = " Dates are local dates in the workspace's timezone, `from` and `to` included (default: the last 30 days up to today). " +
	"Every number is a metric of GET /v1/metrics/definitions, read from daily rollups that are kept with the events they count. " +
	"A ratio with nothing to divide by is null. A client-scoped key sees only its clients' numbers: " +
	"a client_id outside them is 403, a sequence or sender it may not see is 404."

func (s *Server) registerReports() {
	tags := []string{"Reports"}
	read := func(op huma.Operation) huma.Operation {
		op.Method, op.Tags = http.MethodGet, tags
		op.Description += reportsDoc
		op.Errors = append(op.Errors, http.StatusForbidden, http.StatusNotFound, http.StatusUnprocessableEntity)
		return op
	}
	register(s, read(huma.Operation{OperationID: "report-overview", Path: "/v1/reports/overview", Summary: "Overview report",
		Description: "Every metric over the period, with a daily or weekly series."}),
		apikit.RoleClientViewer, apikit.ClassRead, func(ctx context.Context, p apikit.Principal, in *ReportSeriesInput) (*dataOutput[*reports.Report], error) {
			return dataFrom(s.reports.Overview(ctx, p, in.params(in.Interval)))
		})
	register(s, read(huma.Operation{OperationID: "report-funnel", Path: "/v1/reports/funnel", Summary: "Funnel report",
		Description: "Enrolled, contacted, invitation accepted (LinkedIn), replied, interested and meeting booked, with step-to-step conversion."}),
		apikit.RoleClientViewer, apikit.ClassRead, func(ctx context.Context, p apikit.Principal, in *ReportPeriod) (*dataOutput[*reports.Funnel], error) {
			return dataFrom(s.reports.Funnel(ctx, p, in.params("")))
		})
	register(s, read(huma.Operation{OperationID: "report-intents", Path: "/v1/reports/intents", Summary: "Intents report",
		Description: "Replies per intent, as counts and shares of all replies. A thread counts once, with its intent now."}),
		apikit.RoleClientViewer, apikit.ClassRead, func(ctx context.Context, p apikit.Principal, in *ReportPeriod) (*dataOutput[*reports.Intents], error) {
			return dataFrom(s.reports.Intents(ctx, p, in.params("")))
		})
	register(s, read(huma.Operation{OperationID: "report-reply-threads", Path: "/v1/reports/reply-threads", Summary: "Threads that got replies",
		Description: "The threads whose first reply came in the period, the latest first, with lead, sender, sequence, intent, first reply time and time to reply."}),
		apikit.RoleClientViewer, apikit.ClassRead, func(ctx context.Context, p apikit.Principal, in *ReportPageInput) (*pageOutput[reports.ReplyThread], error) {
			page, err := s.reports.ReplyThreads(ctx, p, in.params(""), in.Limit, in.Offset)
			if err != nil {
				return nil, err
			}
			return &pageOutput[reports.ReplyThread]{Body: page}, nil
		})
	register(s, read(huma.Operation{OperationID: "report-cost", Path: "/v1/reports/cost", Summary: "Cost report",
		Description: "cost.total, cost.per_reply and cost.per_meeting, and the cost per sender and per client. Each sender's monthly_cost is spread over the days of " +
			"its months (from the day it was added, until today), and each day's share over the clients and sequences it worked for by their share of its actions; " +
			"a day without actions counts for the sender and its client but for no sequence."}),
		apikit.RoleClientViewer, apikit.ClassRead, func(ctx context.Context, p apikit.Principal, in *ReportPeriod) (*dataOutput[*reports.Cost], error) {
			return dataFrom(s.reports.Cost(ctx, p, in.params("")))
		})
	for _, kind := range []string{reports.Sequences, reports.Senders, reports.Clients} {
		register(s, read(huma.Operation{OperationID: "report-" + kind, Path: "/v1/reports/" + kind, Summary: "Report per " + kind[:len(kind)-1],
			Description: "One row per " + kind[:len(kind)-1] + " the key sees, with every metric over the period, sorted by a metric and paged."}),
			apikit.RoleClientViewer, apikit.ClassRead, func(ctx context.Context, p apikit.Principal, in *reportListInput) (*pageOutput[reports.Row], error) {
				page, err := s.reports.List(ctx, p, kind, in.params(""), reports.ListParams{Sort: in.Sort, Limit: in.Limit, Offset: in.Offset})
				if err != nil {
					return nil, err
				}
				return &pageOutput[reports.Row]{Body: page}, nil
			})
		extra := map[string]string{reports.Sequences: " Adds per-step numbers (sent, replied, failed).",
			reports.Senders: " Adds each action's daily use against its effective cap.", reports.Clients: ""}[kind]
		register(s, read(huma.Operation{OperationID: "report-" + kind[:len(kind)-1], Path: "/v1/reports/" + kind + "/{id}",
			Summary:     "Report of one " + kind[:len(kind)-1],
			Description: "One " + kind[:len(kind)-1] + "'s metrics over the period, with a series." + extra}),
			apikit.RoleClientViewer, apikit.ClassRead, func(ctx context.Context, p apikit.Principal, in *reportSubjectInput) (*dataOutput[*reports.Subject], error) {
				return dataFrom(s.reports.Subject(ctx, p, kind, in.ID, in.params(in.Interval)))
			})
	}
}
