package jsonrpc

import "testing"

func TestNoMessage(t *testing.T) {
	tests := []struct {
		data string
		want bool
	}{
		{"", true},
		{" \n", true},
		{"{}", true},
		{" { } ", true},
		{`{"foo":1}`, true},
		{`{"jsonrpc":"2.0","method":"x"}`, false},
		{`{"id":1,"result":{}}`, false},
		{`{"method":"x"}`, false},
		{`{`, false},
		{`not json`, false},
		{`[]`, false},
		{`null`, false},
	}
	for _, tt := range tests {
		if got := NoMessage([]byte(tt.data)); got != tt.want {
			t.Errorf("NoMessage(%q) = %v, want %v", tt.data, got, tt.want)
		}
	}
}
