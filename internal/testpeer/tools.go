package testpeer

import (
	"encoding/binary"
	"fmt"
	"strconv"
)

// The tools of every server kind, in registration order.
const (
	toolGetWeather = "get_weather"
	toolEcho       = "echo"
	toolImage      = "image"
	toolAudio      = "audio"
	toolResource   = "resource"
	toolAdd        = "add"
	toolCrash      = "crash"
	toolSlow       = "slow"
	toolProgress   = "progress"
)

// Fixed tool outputs, shared by both server implementations.
const (
	// rateLimitedLocation is the location for which get_weather fails with
	// the tool error of the MCP tools specification.
	rateLimitedLocation = "Atlantis"
	rateLimitText       = "Failed to fetch weather data: API rate limit exceeded"

	imageMIMEType = "image/png"
	audioMIMEType = "audio/wav"

	resourceURI      = "file:///demo.txt"
	resourceText     = "hello"
	resourceMIMEType = "text/plain"

	doneText = "done"
	okText   = "ok"
)

// weatherText is the successful get_weather text for a location.
func weatherText(location string) string {
	return fmt.Sprintf("Current weather in %s:\nTemperature: 72°F\nConditions: Partly cloudy", location)
}

// sumText is the text result of add.
func sumText(a, b float64) string {
	return strconv.FormatFloat(a+b, 'g', -1, 64)
}

// pngBytes returns a 1×1 PNG image.
func pngBytes() []byte {
	return []byte{
		0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0x00, 0x00, 0x0d,
		0x49, 0x48, 0x44, 0x52, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x01,
		0x08, 0x02, 0x00, 0x00, 0x00, 0x90, 0x77, 0x53, 0xde, 0x00, 0x00, 0x00,
		0x10, 0x49, 0x44, 0x41, 0x54, 0x78, 0x9c, 0x62, 0xd2, 0xaa, 0xff, 0x0f,
		0x08, 0x00, 0x00, 0xff, 0xff, 0x02, 0x87, 0x01, 0xab, 0xb7, 0xbe, 0xf8,
		0x24, 0x00, 0x00, 0x00, 0x00, 0x49, 0x45, 0x4e, 0x44, 0xae, 0x42, 0x60,
		0x82,
	}
}

// wavBytes returns a short 8-bit mono PCM WAV file (8 samples at 8 kHz).
func wavBytes() []byte {
	samples := []byte{0x80, 0xa0, 0xc0, 0xa0, 0x80, 0x60, 0x40, 0x60}
	const (
		channels      = 1
		sampleRate    = 8000
		bitsPerSample = 8
	)
	var b []byte
	le := binary.LittleEndian
	b = append(b, "RIFF"...)
	b = le.AppendUint32(b, uint32(36+len(samples)))
	b = append(b, "WAVEfmt "...)
	b = le.AppendUint32(b, 16) // fmt chunk size
	b = le.AppendUint16(b, 1)  // PCM
	b = le.AppendUint16(b, channels)
	b = le.AppendUint32(b, sampleRate)
	b = le.AppendUint32(b, sampleRate*channels*bitsPerSample/8) // byte rate
	b = le.AppendUint16(b, channels*bitsPerSample/8)            // block align
	b = le.AppendUint16(b, bitsPerSample)
	b = append(b, "data"...)
	b = le.AppendUint32(b, uint32(len(samples)))
	return append(b, samples...)
}
