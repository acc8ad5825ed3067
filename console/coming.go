package console

import "net/http"

// comingAreas are the menu's areas whose pages are not in the console
// yet. Their paths answer a page that says so, and where the API and the
// command line do the same work meanwhile.
var comingAreas = map[string]string{
	"sequences": "GET /v1/sequences, `leadline apply -f setup.yaml` (sequences:), POST /v1/sequences/{id}/activate",
	"senders":   "GET /v1/senders, `leadline apply` (senders:), `leadline senders check`",
}

func (c *Console) routesComing() {
	for _, a := range areas {
		how, ok := comingAreas[a.Key]
		if !ok {
			continue
		}
		a := a
		c.handle("GET "+a.Path, a.Role, func(rq *Request) error {
			return rq.Render(http.StatusOK, "coming", page{Title: a.Label, Nav: a.Key, Data: struct{ Label, How string }{a.Label, how}})
		})
	}
}
