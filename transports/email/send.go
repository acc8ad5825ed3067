package email

import (
	"context"
	"errors"
	"fmt"
	"net/textproto"
	"strings"

	"github.com/wneessen/go-mail"

	"github.com/leadline/leadline/senders"
)

// smtpConn connects b to sender s's SMTP server and signs in, unless it
// is connected. A failure is a sender-level error: connection_failed,
// auth_failed or credentials_missing.
func (t *Transport) smtpConn(ctx context.Context, b *box, s *senders.Sender) error {
	if b.smtp != nil {
		return nil
	}
	refused, err := t.smtpDial(ctx, b, s, false)
	if refused && smtpOf(s).Auth == "oauth" && ctx.Err() == nil {
		// The server refused the connected account's access token: a new
		// one, once.
		_, err = t.smtpDial(ctx, b, s, true)
	}
	return err
}

// smtpDial connects b to s's SMTP server and signs in, with a fresh
// access token when fresh (auth: oauth); refused reports that the server
// refused the credentials.
func (t *Transport) smtpDial(ctx context.Context, b *box, s *senders.Sender, fresh bool) (refused bool, err error) {
	m := smtpOf(s)
	if m == nil {
		return false, &senders.TransportError{Kind: senders.SenderLevel, Code: CodeConnectionFailed, Signal: CodeConnectionFailed,
			Message: "the sender has no smtp settings"}
	}
	who, err := loginOf(ctx, t.keys(), s, m, "smtp", fresh)
	if err != nil {
		return false, err
	}
	cfg, err := tlsConfig(m)
	if err != nil {
		return false, connectionFailed("smtp", m, err)
	}
	warnInsecure(t.cfg.Logger, s, m, "smtp")
	opts := []mail.Option{mail.WithPort(m.Port), mail.WithTimeout(t.cfg.Timeout), mail.WithTLSConfig(cfg),
		mail.WithUsername(who.username), mail.WithPassword(who.secret), mail.WithHELO(helo(s))}
	switch m.Security {
	case "tls":
		opts = append(opts, mail.WithSSL())
	case "starttls":
		opts = append(opts, mail.WithTLSPolicy(mail.TLSMandatory))
	default:
		opts = append(opts, mail.WithTLSPolicy(mail.NoTLS))
	}
	switch {
	case who.oauth:
		opts = append(opts, mail.WithSMTPAuth(mail.SMTPAuthXOAUTH2))
	case m.Security == "none":
		// Warned above for another host; a relay here is on loopback.
		opts = append(opts, mail.WithSMTPAuth(mail.SMTPAuthPlainNoEnc))
	default:
		opts = append(opts, mail.WithSMTPAuth(mail.SMTPAuthPlain))
	}
	c, err := mail.NewClient(m.Host, opts...)
	if err != nil {
		return false, connectionFailed("smtp", m, err)
	}
	if err := c.DialWithContext(ctx); err != nil {
		if ctx.Err() != nil {
			return false, ctx.Err()
		}
		if isAuthError(err) {
			return true, authFailed("smtp", m, err)
		}
		return false, connectionFailed("smtp", m, err)
	}
	b.smtp = c
	return false, nil
}

// helo is the name the client greets with: the sender's domain.
func helo(s *senders.Sender) string {
	if s.Address != nil {
		if _, d, ok := strings.Cut(*s.Address, "@"); ok && d != "" {
			return d
		}
	}
	return "localhost"
}

// isAuthError reports whether a dial failed at authentication.
func isAuthError(err error) bool {
	var te *textproto.Error
	if errors.As(err, &te) {
		return te.Code == 535 || te.Code == 534 || te.Code == 530 || te.Code == 538
	}
	return errors.Is(err, mail.ErrPlainAuthNotSupported) || errors.Is(err, mail.ErrXOauth2AuthNotSupported) ||
		strings.Contains(err.Error(), "does not support SMTP AUTH")
}

// send sends l over b's SMTP connection. A connection found closed
// before anything was sent is opened again once. A refusal is a
// *senders.TransportError; any other error leaves the outcome unknown.
func (t *Transport) send(ctx context.Context, b *box, s *senders.Sender, l *letter) error {
	for try := 0; ; try++ {
		if err := t.smtpConn(ctx, b, s); err != nil {
			return err
		}
		stop := context.AfterFunc(ctx, func() { _ = b.smtp.Close() })
		err := b.smtp.Send(l.msg)
		stop()
		if err == nil {
			return nil
		}
		var se *mail.SendError
		if !errors.As(err, &se) {
			b.smtp.Close()
			b.smtp = nil
			return err
		}
		if !se.IsTemp() && se.ErrorCode() == 0 && before(se.Reason) {
			// The connection went away before the transaction: nothing was
			// sent; connect again once.
			b.smtp.Close()
			b.smtp = nil
			if try == 0 && ctx.Err() == nil {
				continue
			}
			return connectionFailed("smtp", smtpOf(s), se)
		}
		if se.ErrorCode() == 0 {
			// Cut during or after DATA: the server may have the message.
			b.smtp.Close()
			b.smtp = nil
			return fmt.Errorf("smtp: the connection ended while sending: %w", se)
		}
		return refused(s, se)
	}
}

// before reports whether a send failed before the message's data was
// handed over.
func before(r mail.SendErrReason) bool {
	switch r {
	case mail.ErrConnCheck, mail.ErrSMTPReset, mail.ErrSMTPMailFrom, mail.ErrSMTPRcptTo, mail.ErrSMTPData, mail.ErrGetSender, mail.ErrGetRcpts:
		return true
	}
	return false
}

// refused maps an SMTP answer to the runner's kinds of error: 4xx is
// transient (greylisting too); a 5xx for the recipient is permanent and
// recorded as a bounce; a 5xx for the sender (authentication, a policy
// block) is sender-level, shown in its health.
func refused(s *senders.Sender, se *mail.SendError) error {
	code := se.ErrorCode()
	msg := fmt.Sprintf("the server answered %d", code)
	if esc := se.EnhancedStatusCode(); esc != "" {
		msg += " " + esc
	}
	msg += ": " + strings.TrimSpace(se.Error())
	switch {
	case code >= 400 && code < 500:
		return &senders.TransportError{Kind: senders.Transient, Code: "smtp_deferred", Message: msg}
	case code == 535 || code == 530 || code == 534:
		return authFailed("smtp", smtpOf(s), se)
	case se.Reason == mail.ErrSMTPRcptTo:
		return &senders.TransportError{Kind: senders.Permanent, Code: senders.CodeBounced, Message: msg}
	case se.Reason == mail.ErrSMTPMailFrom:
		return &senders.TransportError{Kind: senders.SenderLevel, Code: "sender_refused", Signal: senders.SignalRestricted,
			Message: msg + ". The server refuses mail from this sender: check its policy (SPF, the account's sending rights) with the provider."}
	default:
		return &senders.TransportError{Kind: senders.Permanent, Code: "message_refused", Message: msg}
	}
}
