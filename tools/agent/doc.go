// Package agent holds the agent's own utility tools: calculate, write_todo,
// chat_history, write_error, error_history, store_secret, public_api_list,
// html_template, reasoning_guide, write_result and ask_user.
//
// Per-session data lives in Redis (Config.Store, cache.SessionData), under
// these keys:
//
//	toolround:todo:<session_id>     string: the todo list, a JSON array of {text, done}
//	toolround:errors:<session_id>   list: write_error records, one JSON object each, oldest first
//	toolround:result:<session_id>   hash: run_id -> the run's write_result record (JSON)
//	toolround:secret:<session_id>   hash: name -> sealed value (package secrets)
//	toolround:history:<session_id>  list: the session's messages, written by the engine
//	                                (tools.HistoryKey) and only read here
//
// Each key written here expires Config.TTL after its last write. Without a
// Store the tools keep their data in a map inside the process: it is
// not shared between workers, is lost on restart, and chat_history has no
// history to read. Use that only for a single worker in tests or demos.
package agent
