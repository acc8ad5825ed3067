package console

import "net/http"

// comingAreas are the menu's areas whose pages are not in the console
// yet. Their paths answer a page that says so, and where the API and the
// command line do the same work meanwhile.
var comingAreas = map[string]string{
	"inbox":    "GET /v1/threads, POST /v1/threads/{id}/reply",
	"tasks":    "GET /v1/tasks, POST /v1/tasks/{id}/complete",
	"reports":  "GET /v1/reports/overview and the other /v1/reports routes",
	"settings": "`leadline keys create|list|revoke`, /v1/webhooks, /v1/suppressions",
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
