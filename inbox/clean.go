package inbox

import (
	"regexp"
	"strings"
	"unicode/utf8"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// The reply cleaner: what a lead wrote in a reply, without the message it
// quotes, its signature and the legal notices its mail server appends.
// Everything that reads a reply (the classifier, the return date) reads the
// cleaned text; the stored message keeps the whole body.

// CleanReply returns the new text of a reply whose body has the given
// content type: HTML ("text/html", with or without parameters) is turned
// into text first, anything else is read as plain text.
func CleanReply(body, contentType string) string {
	if isHTML(contentType) {
		return CleanHTML(body)
	}
	return Clean(body)
}

func isHTML(contentType string) bool {
	ct := strings.ToLower(strings.TrimSpace(contentType))
	return strings.HasPrefix(ct, "text/html") || strings.HasPrefix(ct, "html")
}

// CleanHTML turns an HTML reply into text (blocks and line breaks become
// lines, a blockquote's lines are quoted with "> ", scripts, styles and
// images are left out) and returns its new text, as Clean does.
func CleanHTML(body string) string {
	return Clean(HTMLText(body))
}

// HTMLText is the text of an HTML message, one line per block.
func HTMLText(body string) string {
	doc, err := html.Parse(strings.NewReader(body))
	if err != nil {
		return body
	}
	var t htmlText
	t.walk(doc, 0)
	return t.b.String()
}

// htmlText writes a document's text, line by line; depth is how many
// blockquotes enclose the current line.
type htmlText struct {
	b     strings.Builder
	line  strings.Builder
	depth int
	// blank: the current block held only a non-breaking space, Outlook's
	// empty paragraph.
	blank bool
}

func (t *htmlText) flush() {
	l := strings.TrimSpace(t.line.String())
	t.line.Reset()
	if t.depth > 0 {
		l = strings.Repeat("> ", t.depth) + l
	}
	t.b.WriteString(strings.TrimRight(l, " "))
	t.b.WriteByte('\n')
}

// endBlock ends the current line if it holds text.
func (t *htmlText) endBlock() {
	if strings.TrimSpace(t.line.String()) != "" {
		t.flush()
	} else if t.blank {
		t.b.WriteByte('\n')
	}
	t.line.Reset()
	t.blank = false
}

var blocks = map[atom.Atom]bool{
	atom.P: true, atom.Div: true, atom.Tr: true, atom.Li: true, atom.H1: true, atom.H2: true, atom.H3: true, atom.H4: true,
	atom.H5: true, atom.H6: true, atom.Table: true, atom.Ul: true, atom.Ol: true, atom.Pre: true, atom.Hr: true,
	atom.Section: true, atom.Article: true, atom.Header: true, atom.Footer: true, atom.Address: true, atom.Dl: true, atom.Dt: true, atom.Dd: true,
}

func (t *htmlText) walk(n *html.Node, pre int) {
	switch n.Type {
	case html.TextNode:
		s := n.Data
		if pre == 0 {
			s = strings.Join(strings.Fields(strings.ReplaceAll(s, "\u00a0", " ")), " ")
			if s == "" {
				t.blank = t.blank || strings.Contains(n.Data, "\u00a0")
				if n.Data != "" && t.line.Len() > 0 {
					t.line.WriteByte(' ')
				}
				return
			}
			if first, _ := utf8.DecodeRuneInString(n.Data); first == ' ' || first == '\n' || first == '\t' {
				t.line.WriteByte(' ')
			}
			t.line.WriteString(s)
			if last, _ := utf8.DecodeLastRuneInString(n.Data); last == ' ' || last == '\n' || last == '\t' {
				t.line.WriteByte(' ')
			}
			return
		}
		for i, part := range strings.Split(s, "\n") {
			if i > 0 {
				t.flush()
			}
			t.line.WriteString(part)
		}
		return
	case html.ElementNode:
		switch n.DataAtom {
		case atom.Script, atom.Style, atom.Head, atom.Title, atom.Img, atom.Noscript, atom.Template:
			return
		case atom.Br:
			t.flush()
			return
		case atom.Blockquote:
			t.endBlock()
			t.depth++
			for c := n.FirstChild; c != nil; c = c.NextSibling {
				t.walk(c, pre)
			}
			t.endBlock()
			t.depth--
			return
		case atom.Pre:
			pre++
		}
		if blocks[n.DataAtom] {
			t.endBlock()
		}
		if n.DataAtom == atom.Li {
			t.line.WriteString("- ")
		}
		if n.DataAtom == atom.Hr {
			t.line.WriteString("---")
			t.flush()
		}
	}
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		t.walk(c, pre)
	}
	if n.Type == html.ElementNode && blocks[n.DataAtom] {
		t.endBlock()
	}
	if n.Type == html.ElementNode && (n.DataAtom == atom.Td || n.DataAtom == atom.Th) {
		t.line.WriteByte(' ')
	}
	if n.Type == html.DocumentNode {
		t.endBlock()
	}
}

// Clean returns the new text of a plain-text reply: without quoted lines
// ("> "), the earlier message under an attribution line ("On … wrote:" in
// English, German, French, Spanish, Dutch, Italian and Portuguese), a
// header block ("From:/Sent:/To:/Subject:" and their translations), an
// "Original Message" or forwarded-message separator, the signature ("-- ",
// a sign-off followed by name, title and phone lines, "Sent from my …")
// and confidentiality notices. A reply that is nothing but a sign-off
// ("Thanks!") keeps it.
func Clean(body string) string {
	body = strings.ReplaceAll(strings.ReplaceAll(body, "\r\n", "\n"), "\r", "\n")
	body = strings.ReplaceAll(body, "\u00a0", " ")
	lines := strings.Split(body, "\n")
	lines = lines[:earlierMessage(lines)]
	// Quoted lines, wherever they are: an answer written between quoted
	// parts keeps its own lines.
	kept := lines[:0:0]
	for _, l := range lines {
		if !quoted(l) {
			kept = append(kept, l)
		}
	}
	kept = kept[:signature(kept)]
	// Blank runs fold into one blank line.
	var out []string
	for _, l := range kept {
		l = strings.TrimRight(l, " \t")
		if l == "" && (len(out) == 0 || out[len(out)-1] == "") {
			continue
		}
		out = append(out, l)
	}
	return strings.TrimSpace(strings.Join(out, "\n"))
}

func quoted(l string) bool { return strings.HasPrefix(strings.TrimLeft(l, " \t"), ">") }

// attribution opens the line that introduces a quoted message: "On … wrote:"
// and its translations. The line may wrap (Gmail breaks long ones), so it
// is matched on the line joined with the next one.
var attribution = regexp.MustCompile(`(?is)^\s*(on|am|le|el|op|il|em)\s.{4,300}?\b(wrote|schrieb|a écrit|a ecrit|escribió|escribio|schreef|ha scritto|escreveu)\b[^:\n]{0,120}:\s*$`)

// separator is a line that starts an earlier or forwarded message.
var separator = regexp.MustCompile(`(?i)^\s*(-{2,}|_{2,}|\*{2,})?\s*(original message|ursprüngliche nachricht|urspr\S* nachricht|message d'origine|mensaje original|oorspronkelijk bericht|messaggio originale|mensagem original|forwarded message|weitergeleitete nachricht|message transféré|message transfere|mensaje reenviado|doorgestuurd bericht|messaggio inoltrato|mensagem encaminhada|begin forwarded message|anfang der weitergeleiteten nachricht|début du message réexpédié|inicio del mensaje reenviado)\s*:?\s*(-{2,}|_{2,}|\*{2,})?\s*$`)

// headerFrom and headerOther are the lines of a quoted header block, as
// Outlook, Gmail and Apple Mail write them in several languages.
var (
	headerFrom  = regexp.MustCompile(`(?i)^\s*\**\s*(from|von|de|da|van|od)\s*\**\s*:\s*\S`)
	headerOther = regexp.MustCompile(`(?i)^\s*\**\s*(sent|date|to|cc|subject|gesendet|datum|an|betreff|envoyé|envoye|à|a|objet|enviado|fecha|para|asunto|verzonden|datum|aan|onderwerp|inviato|data|oggetto|assunto)\s*\**\s*:`)
)

// earlierMessage returns the index of the first line of the message a
// reply quotes or forwards (len(lines) when there is none).
func earlierMessage(lines []string) int {
	for i, l := range lines {
		t := strings.TrimSpace(l)
		if t == "" {
			continue
		}
		if separator.MatchString(t) {
			return i
		}
		if headerFrom.MatchString(t) && headerBlock(lines[i+1:]) {
			// An Outlook rule above the block belongs to it.
			if j := prevNonEmpty(lines, i); j >= 0 && isRule(lines[j]) {
				return j
			}
			return i
		}
		if k := attributionAt(lines, i); k > 0 {
			// An attribution above quoted lines only goes with them (the
			// reply may go on below them); above unquoted text it starts
			// the earlier message.
			if nextQuoted(lines, i+k) {
				for j := i; j < i+k; j++ {
					lines[j] = ""
				}
				continue
			}
			return i
		}
	}
	return len(lines)
}

func nextQuoted(lines []string, from int) bool {
	j := nextNonEmpty(lines, from)
	return j >= 0 && quoted(lines[j])
}

// attributionAt returns how many lines the attribution line at i spans
// (1, or 2 when it wraps), or 0 when line i starts none.
func attributionAt(lines []string, i int) int {
	t := strings.TrimSpace(lines[i])
	if attribution.MatchString(t) {
		return 1
	}
	if i+1 < len(lines) && len(t) < 200 && attribution.MatchString(t+" "+strings.TrimSpace(lines[i+1])) {
		return 2
	}
	return 0
}

// headerBlock reports whether the lines after a From: line hold another
// header line within the next few lines.
func headerBlock(rest []string) bool {
	n := 0
	for _, l := range rest {
		if strings.TrimSpace(l) == "" {
			continue
		}
		if headerOther.MatchString(l) {
			return true
		}
		if n++; n >= 2 {
			return false
		}
	}
	return false
}

func isRule(l string) bool {
	t := strings.TrimSpace(l)
	return len(t) >= 3 && strings.Trim(t, "_-=*") == ""
}

func prevNonEmpty(lines []string, i int) int {
	for j := i - 1; j >= 0; j-- {
		if strings.TrimSpace(lines[j]) != "" {
			return j
		}
	}
	return -1
}

func nextNonEmpty(lines []string, i int) int {
	for j := i; j < len(lines); j++ {
		if strings.TrimSpace(lines[j]) != "" {
			return j
		}
	}
	return -1
}

// sentFrom is a mobile client's signature line.
var sentFrom = regexp.MustCompile(`(?i)^\s*(sent from my|sent from outlook|sent from mail for|sent from yahoo|sent with|get outlook for|sent via|von meinem \S+ gesendet|gesendet von meinem|von meinem iphone|envoyé de mon|envoye de mon|envoyé depuis|envoye depuis|enviado desde mi|enviado desde|verzonden vanaf mijn|verstuurd vanaf mijn|inviato da|enviado do meu|enviado a partir d)`)

// notice opens a confidentiality notice or an environmental footer.
var notice = regexp.MustCompile(`(?i)^\s*\**\s*(confidentiality notice|confidential|disclaimer|this e-?mail (and any|message|is|may|contains)|this message (and any|is|may|contains|\(including)|the information (contained|in this)|if you (are not|have received) |vertraulichkeitshinweis|diese (e-?mail|nachricht)|der inhalt dieser|haftungsausschluss|ce (message|courriel|courrier|mail|e-?mail)|les informations contenues|avis de confidentialit|este (mensaje|correo)|la información contenida|la informacion contenida|aviso (legal|de confidencialidad)|aviso de privacidad|dit (e-?mail|bericht)|de informatie (in|verzonden)|questo messaggio|le informazioni contenute|esta mensagem|as informações contidas|as informacoes contidas|aviso de confidencialidade|please consider the environment|bitte denken sie an die umwelt|pensez à l'environnement|merci de penser à l'environnement|antes de imprimir|piense en el medio ambiente|this email was intended for|you are receiving (linkedin|this)|© ?\d{4} linkedin|unsubscribe from)`)

// noticeWords tell a notice from an ordinary sentence that opens the same
// way ("This email is great").
var noticeWords = regexp.MustCompile(`(?i)(confiden|vertraulich|privileg|intended|recipient|empfänger|bestimmt|destinataire|destinatario|geadresseerde|destinatari|strictly|streng|prohib|untersagt|interdit|prohibid|verboden|vietat|proibid|environment|umwelt|environnement|medio ambiente|ambiente|milieu|linkedin|unsubscribe|notification)`)

// signOff is a closing line: a sign-off alone, or followed by a name
// ("Best, Anna").
var signOff = regexp.MustCompile(`^\s*(?i:best|best regards|best wishes|kind regards|warm regards|warmest regards|regards|many thanks|thanks|thank you|thanks again|thx|cheers|all the best|sincerely|yours|yours sincerely|talk soon|speak soon|mit freundlichen grüßen|mit freundlichen grüssen|mfg|viele grüße|viele grüsse|beste grüße|beste grüsse|liebe grüße|liebe grüsse|herzliche grüße|schöne grüße|freundliche grüße|grüße|gruß|lg|vg|danke|cordialement|bien cordialement|bien à vous|bien a vous|salutations|sincères salutations|bonne journée|bonne journee|merci|merci beaucoup|à bientôt|a bientot|saludos|un saludo|saludos cordiales|atentamente|un abrazo|gracias|muchas gracias|met vriendelijke groet|met vriendelijke groeten|vriendelijke groet|groeten|groet|hartelijke groet|cordiali saluti|distinti saluti|saluti|grazie|buona giornata|atenciosamente|abraços|abracos|cumprimentos|obrigado|obrigada)\s*[,.!]*\s*([-–—]?\s*\p{Lu}[\p{L}.'-]*(\s+\p{Lu}[\p{L}.'-]*){0,2})?\s*$`)

// signature returns the index of the first line of the reply's signature
// (len(lines) when there is none).
func signature(lines []string) int {
	first := nextNonEmpty(lines, 0)
	for i, l := range lines {
		t := strings.TrimSpace(l)
		switch {
		case l == "-- " || l == "--" || t == "--" || t == "—":
			return i
		case sentFrom.MatchString(t):
			return i
		case notice.MatchString(t) && noticeWords.MatchString(paragraph(lines, i)):
			return i
		case i > first && signOff.MatchString(t) && signatureBelow(lines[i+1:]):
			return i
		}
	}
	return len(lines)
}

// paragraph is the text from line i to the next blank line.
func paragraph(lines []string, i int) string {
	var b strings.Builder
	for ; i < len(lines) && strings.TrimSpace(lines[i]) != ""; i++ {
		b.WriteString(lines[i])
		b.WriteByte(' ')
	}
	return b.String()
}

// signatureBelow reports whether what follows a sign-off is a signature:
// nothing, or a few short lines (name, title, company, phone, address,
// links) rather than more of the message.
func signatureBelow(rest []string) bool {
	n := 0
	for _, l := range rest {
		t := strings.TrimSpace(l)
		if t == "" {
			continue
		}
		if notice.MatchString(t) || sentFrom.MatchString(t) || t == "--" {
			return true
		}
		n++
		if n > 8 || utf8.RuneCountInString(t) > 80 || (strings.HasSuffix(t, "?") && !contactLine.MatchString(t)) {
			return false
		}
	}
	return true
}

// contactLine is a line of a signature block: a phone number, an address,
// a link.
var contactLine = regexp.MustCompile(`(?i)(\+?\d[\d ()./-]{6,}|@|https?://|www\.)`)
