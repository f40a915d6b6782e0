package web

import (
	"fmt"
	"net"
	"strconv"
	"strings"
)

// EnvHostConcurrency is the environment variable a worker reads with
// ParseHostConcurrency into Config.HostConcurrency and Config.HostLimits.
const EnvHostConcurrency = "HTTP_HOST_CONCURRENCY"

// ParseHostConcurrency reads HTTP_HOST_CONCURRENCY: comma-separated items,
// each a number (the bound for every host) or HOST=N (HOST a host name, or
// host:port) for one host, as in "8,api.example.com=2,127.0.0.1:8080=1".
// An empty value gives n 0 (the default) and no per-host limits.
func ParseHostConcurrency(v string) (n int, per map[string]int, err error) {
	for _, item := range strings.Split(v, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		host, num, isHost := strings.Cut(item, "=")
		if !isHost {
			num = host
		}
		k, err := strconv.Atoi(strings.TrimSpace(num))
		if err != nil || k < 1 {
			return 0, nil, fmt.Errorf("%s: %q: want a number above 0, or HOST=N", EnvHostConcurrency, item)
		}
		if !isHost {
			if n != 0 {
				return 0, nil, fmt.Errorf("%s: %q: the bound for every host is given twice", EnvHostConcurrency, item)
			}
			n = k
			continue
		}
		host = strings.ToLower(strings.TrimSpace(host))
		if host == "" || strings.ContainsAny(host, "/ ") {
			return 0, nil, fmt.Errorf("%s: %q: want a host name or host:port before =", EnvHostConcurrency, item)
		}
		if per == nil {
			per = map[string]int{}
		}
		if _, dup := per[host]; dup {
			return 0, nil, fmt.Errorf("%s: %q: host %s is given twice", EnvHostConcurrency, item, host)
		}
		per[host] = k
	}
	return n, per, nil
}

// hostLimit is the limit of one host key ("host:<host[:port]>", as
// tools.HostKey makes it): the host with its port, else its name alone,
// else zero, which leaves the tool's HostConcurrency.
func (w *web) hostLimit(key string) int {
	if len(w.cfg.HostLimits) == 0 {
		return 0
	}
	hp := strings.TrimPrefix(key, "host:")
	if n, ok := w.cfg.HostLimits[hp]; ok {
		return n
	}
	if h, _, err := net.SplitHostPort(hp); err == nil {
		if n, ok := w.cfg.HostLimits[strings.Trim(h, "[]")]; ok {
			return n
		}
	}
	return 0
}
