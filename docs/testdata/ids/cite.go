package fixture

// P1.1: a call of run_tool becomes a call of the tool it names.
func unwrap() int {
	A1, M5 := 1, 0xA1 // identifiers and numbers are not citations
	// K2 and
	// P1.7 on consecutive comment lines.
	_ = "sha256:deadbeefA1 xM5 P1.70x" // look-alikes inside words
	_ = "http://m%C3%A9@host/%A9"      // percent-encoded bytes
	return A1 + M5 + len(msg)
}

var msg = "see T11 for this"

/*
A block comment
that cites C4.
*/
