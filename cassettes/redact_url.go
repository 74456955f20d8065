package cassettes

import "net/url"

// RedactURL returns the URL s as mcpmock shows it (in its messages, in the
// errors it answers with, in a cassette's meta): its password and the
// values of its secret-named query parameters ([SecretName]: api_key,
// token, client_secret, sig...) replaced by [Redacted]. A string that is no
// URL is redacted by the default rules' patterns instead.
func RedactURL(s string) string {
	u, err := url.Parse(s)
	if err != nil {
		out, _ := DefaultRedactor().RedactText(s)
		return out
	}
	q := u.Query()
	changed := false
	for k := range q {
		if SecretName(k) {
			q.Set(k, Redacted)
			changed = true
		}
	}
	if changed {
		u.RawQuery = q.Encode()
	}
	return u.Redacted()
}

// RedactURLError returns err, an error of an http.Client's Do (a
// *url.Error, which names the whole URL), with that URL redacted by
// RedactURL, changed in place; any other error as it is. It is for the
// error as Do returns it: an error that wraps one has its text already.
func RedactURLError(err error) error {
	if ue, ok := err.(*url.Error); ok {
		ue.URL = RedactURL(ue.URL)
	}
	return err
}
