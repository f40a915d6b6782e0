package workflows

// RuleCountKey is ruleCountKey, for the recorded scenarios of counted rules
// (T15).
var RuleCountKey = ruleCountKey
