package io.github.ratelimit.web;

import java.nio.charset.StandardCharsets;

/**
 * Serialisation of the RFC 9651 structured field values the draft-10 headers use: strings and integers.
 */
final class StructuredFields {

	/** Largest integer RFC 9651 allows (15 digits). */
	static final long MAX_INTEGER = 999_999_999_999_999L;

	private StructuredFields() {
	}

	/**
	 * Append {@code value} as an sf-string. RFC 9651 strings hold printable ASCII only, with {@code "} and
	 * {@code \} escaped; other characters, and {@code %} itself, are written as the percent-encoded bytes of their
	 * UTF-8 form, so that every policy name has one form (reversible, but for lone surrogates, which have no UTF-8
	 * form and are written as {@code ?}, {@code %3F}).
	 */
	static void appendString(StringBuilder out, String value) {
		out.append('"');
		for (int i = 0; i < value.length(); i++) {
			char c = value.charAt(i);
			if (c == '"' || c == '\\') {
				out.append('\\').append(c);
			}
			else if (c >= 0x20 && c <= 0x7e && c != '%') {
				out.append(c);
			}
			else {
				int end = (Character.isHighSurrogate(c) && i + 1 < value.length()
						&& Character.isLowSurrogate(value.charAt(i + 1))) ? i + 2 : i + 1;
				for (byte b : value.substring(i, end).getBytes(StandardCharsets.UTF_8)) {
					out.append('%').append(Character.toUpperCase(Character.forDigit((b >> 4) & 0xF, 16)))
						.append(Character.toUpperCase(Character.forDigit(b & 0xF, 16)));
				}
				i = end - 1;
			}
		}
		out.append('"');
	}

	/** Append a parameter {@code ;key=value} with an sf-integer value, clamped to what RFC 9651 allows. */
	static void appendIntegerParameter(StringBuilder out, String key, long value) {
		out.append(';').append(key).append('=').append(Math.max(-MAX_INTEGER, Math.min(MAX_INTEGER, value)));
	}

}
