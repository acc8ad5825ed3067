package unipile

import (
	"encoding/json"
	"strings"
	"time"

	"github.com/leadline/leadline/senders"
)

// The shapes of Unipile's v2 requests and answers that leadline uses,
// with the fields it reads (docs/TRANSPORTS.md cites the reference).

// invitation is the body of "Send a Relation request".
type invitation struct {
	UserID  string `json:"user_id"`
	Message string `json:"message,omitempty"`
}

// relationRequest is a RelationRequest object (also a follow's answer).
type relationRequest struct {
	Object    string  `json:"object"`
	ID        string  `json:"id"`
	Type      string  `json:"type"`
	User      user    `json:"user"`
	CreatedAt optTime `json:"created_at"`
	Message   string  `json:"message"`
}

// user is a provider's user as lists and events carry it.
type user struct {
	ID               string `json:"id"`
	PublicIdentifier string `json:"public_identifier"`
	DisplayName      string `json:"display_name"`
	ProfileURL       string `json:"profile_url"`
}

// relation is one of "List Relations of a User".
type relation struct {
	ID        string  `json:"id"`
	User      user    `json:"user"`
	CreatedAt optTime `json:"created_at"`
}

// list is a page of a list method.
type list[T any] struct {
	Data       []T    `json:"data"`
	NextCursor string `json:"next_cursor"`
}

// userProfile is "Get a User Profile"'s answer, for LinkedIn.
type userProfile struct {
	Object           string `json:"object"`
	ID               string `json:"id"`
	PublicIdentifier string `json:"public_identifier"`
	DisplayName      string `json:"display_name"`
	FirstName        string `json:"first_name"`
	LastName         string `json:"last_name"`
	ProfileURL       string `json:"profile_url"`
	Description      string `json:"description"`
	Location         string `json:"location"`
	Following        bool   `json:"following"`
	Specifics        struct {
		MemberID          string `json:"member_id"`
		NetworkDistance   string `json:"network_distance"`
		NotifyVisitToken  string `json:"notify_visit_token"`
		CanSendInMail     *bool  `json:"can_send_inmail"`
		IsOpenProfile     *bool  `json:"is_open_profile"`
		IsPremium         *bool  `json:"is_premium"`
		RelationReqStatus string `json:"relation_request_status"`
	} `json:"specifics"`
}

// fields are what a profile view stores on the lead (leads' profile):
// provider_id first, which the inbound path matches people by.
func (p *userProfile) fields() map[string]any {
	out := map[string]any{"source": "unipile", "provider_id": p.ID}
	put := func(k, v string) {
		if v != "" {
			out[k] = v
		}
	}
	put("public_identifier", p.PublicIdentifier)
	put("name", strings.TrimSpace(firstOf(p.DisplayName, p.FirstName+" "+p.LastName)))
	put("first_name", p.FirstName)
	put("last_name", p.LastName)
	put("headline", p.Description)
	put("location", p.Location)
	put("profile_url", p.ProfileURL)
	put("member_id", p.Specifics.MemberID)
	put("network_distance", p.Specifics.NetworkDistance)
	if v := p.Specifics.CanSendInMail; v != nil {
		out["can_send_inmail"] = *v
	}
	if v := p.Specifics.IsOpenProfile; v != nil {
		out["open_profile"] = *v
	}
	if v := p.Specifics.IsPremium; v != nil {
		out["premium"] = *v
	}
	return out
}

// member is the person the profile describes.
func (p *userProfile) member() *senders.Member {
	return &senders.Member{ProviderID: p.ID, PublicIdentifier: strings.ToLower(p.PublicIdentifier)}
}

// startChat is the body of "Start a Chat from Inbox".
type startChat struct {
	UsersIDs  []string       `json:"users_ids"`
	Text      string         `json:"text"`
	Specifics *chatSpecifics `json:"specifics,omitempty"`
}

type chatSpecifics struct {
	LinkedIn linkedInChat `json:"linkedin"`
}

type linkedInChat struct {
	Classic classicChat `json:"classic"`
}

type classicChat struct {
	InMail bool `json:"inmail"`
}

// chatStarted is the answer of "Start a Chat".
type chatStarted struct {
	Object    string `json:"object"`
	ChatID    string `json:"chat_id"`
	MessageID ids    `json:"message_id"`
}

// sendMessage is the body of "Send a Message".
type sendMessage struct {
	Text string `json:"text"`
}

// messageSent is the answer of "Send a Message".
type messageSent struct {
	Object    string `json:"object"`
	MessageID ids    `json:"message_id"`
}

// ids is a message id: one, or several when attachments went separately.
type ids []string

// UnmarshalJSON reads a string, a list of strings or null.
func (v *ids) UnmarshalJSON(b []byte) error {
	var one string
	if err := json.Unmarshal(b, &one); err == nil {
		if one != "" {
			*v = ids{one}
		}
		return nil
	}
	var many []string
	if err := json.Unmarshal(b, &many); err != nil {
		return err
	}
	*v = many
	return nil
}

func (v ids) first() string {
	if len(v) == 0 {
		return ""
	}
	return v[0]
}

// message is a Message object, of "List all Chat Messages" and of the
// message.new event.
type message struct {
	Object    string  `json:"object"`
	ID        string  `json:"id"`
	ChatID    string  `json:"chat_id"`
	SenderID  string  `json:"sender_id"`
	Text      string  `json:"text"`
	Timestamp optTime `json:"timestamp"`
	IsSender  bool    `json:"is_sender"`
	IsEvent   bool    `json:"is_event"`
	Specifics struct {
		Subject string `json:"subject"`
	} `json:"specifics"`
}

// userChats is the answer of "Get a User Chat".
type userChats struct {
	Data []struct {
		ChatID string `json:"chat_id"`
	} `json:"data"`
}

// chat is one of "List all Chats" (newest last message first).
type chat struct {
	Object        string  `json:"object"`
	ID            string  `json:"id"`
	UserID        string  `json:"user_id"`
	UpdatedAt     optTime `json:"updated_at"`
	LastMessageAt optTime `json:"last_message_timestamp"`
}

// accountInfo is "Get an Account"'s answer.
type accountInfo struct {
	Object string `json:"object"`
	ID     string `json:"id"`
	Status string `json:"status"`
}

// optTime is one of Unipile's optional times: absent, null or "" is the
// zero time, so that a list with one such item still reads whole.
type optTime struct{ time.Time }

// UnmarshalJSON reads an RFC 3339 time, null or "".
func (t *optTime) UnmarshalJSON(b []byte) error {
	var v *string
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	if v == nil || strings.TrimSpace(*v) == "" {
		t.Time = time.Time{}
		return nil
	}
	p, err := time.Parse(time.RFC3339Nano, strings.TrimSpace(*v))
	if err != nil {
		return err
	}
	t.Time = p
	return nil
}
