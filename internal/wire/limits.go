package wire

import (
	"time"

	"github.com/toolround/toolround/round"
)

// LimitCounts lists the limits set in l with the counts of u at now; grown
// adds what approvals added.
func LimitCounts(l *round.Limits, u *round.Usage, now time.Time) []round.LimitCount {
	var out []round.LimitCount
	for _, name := range round.LimitNames {
		v := l.Get(name)
		if v == 0 {
			continue
		}
		if u != nil {
			v += u.Grown[name]
		}
		out = append(out, round.LimitCount{Limit: name, Count: u.Count(name, now), Max: v})
	}
	return out
}
