package workflows

import (
	"encoding/json"
	"strings"

	"github.com/toolround/toolround/round"
	"github.com/toolround/toolround/tools"
)

// Validate applies P1.7 to every call that is about to run: it runs after
// the confirm gate, so that a denied call is skipped rather than reported
// invalid. It reads and changes nothing but the calls it is given.
func Validate(plan []Call, snap *Snapshot) {
	var schemas tools.Schemas
	for i := range plan {
		p := &plan[i]
		if p.State != CallReady {
			continue
		}
		ti := snap.Tools[p.Tool]
		if v := schemas.Validate(ti.Parameters, json.RawMessage(p.Args)); len(v) > 0 {
			p.done(round.StatusInvalid, "invalid arguments: "+strings.Join(v, "; "))
		}
	}
}
