package io.github.ratelimit.web;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A parser of RFC 9651 lists whose members are strings with integer parameters (section 4.2, as far as those
 * need), strict: anything else fails, so tests check the serialisation by parsing it back.
 */
final class StructuredFieldList {

	record Member(String value, Map<String, Long> parameters) {

		/** The value with the percent-encoding of characters outside printable ASCII undone. */
		String decodedValue() {
			ByteArrayOutputStream bytes = new ByteArrayOutputStream();
			for (int i = 0; i < this.value.length(); i++) {
				char c = this.value.charAt(i);
				if (c == '%') {
					bytes.write(Integer.parseInt(this.value.substring(i + 1, i + 3), 16));
					i += 2;
				}
				else {
					bytes.write(c);
				}
			}
			return bytes.toString(StandardCharsets.UTF_8);
		}

	}

	private final String input;

	private int position;

	private StructuredFieldList(String input) {
		this.input = input;
	}

	static List<Member> parse(String input) {
		StructuredFieldList parser = new StructuredFieldList(input);
		List<Member> members = parser.list();
		return members;
	}

	private List<Member> list() {
		List<Member> members = new ArrayList<>();
		skip(' ');
		while (this.position < this.input.length()) {
			members.add(member());
			skipWhitespace();
			if (this.position == this.input.length()) {
				return members;
			}
			expect(',');
			skipWhitespace();
			if (this.position == this.input.length()) {
				throw fail("trailing comma");
			}
		}
		return members;
	}

	private Member member() {
		String value = string();
		Map<String, Long> parameters = new LinkedHashMap<>();
		while (this.position < this.input.length() && this.input.charAt(this.position) == ';') {
			this.position++;
			skip(' ');
			String key = key();
			expect('=');
			parameters.put(key, integer());
		}
		return new Member(value, parameters);
	}

	private String string() {
		expect('"');
		StringBuilder out = new StringBuilder();
		while (true) {
			if (this.position >= this.input.length()) {
				throw fail("unterminated string");
			}
			char c = this.input.charAt(this.position++);
			if (c == '\\') {
				char next = this.input.charAt(this.position++);
				if (next != '"' && next != '\\') {
					throw fail("bad escape");
				}
				out.append(next);
			}
			else if (c == '"') {
				return out.toString();
			}
			else if (c < 0x20 || c > 0x7e) {
				throw fail("character outside printable ASCII in a string: " + (int) c);
			}
			else {
				out.append(c);
			}
		}
	}

	private String key() {
		int start = this.position;
		char first = this.input.charAt(this.position);
		if (!(first >= 'a' && first <= 'z') && first != '*') {
			throw fail("bad key start");
		}
		while (this.position < this.input.length()) {
			char c = this.input.charAt(this.position);
			if ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '-' || c == '.' || c == '*') {
				this.position++;
			}
			else {
				break;
			}
		}
		return this.input.substring(start, this.position);
	}

	private long integer() {
		int start = this.position;
		if (this.position < this.input.length() && this.input.charAt(this.position) == '-') {
			this.position++;
		}
		int digits = 0;
		while (this.position < this.input.length() && Character.isDigit(this.input.charAt(this.position))) {
			this.position++;
			digits++;
		}
		if (digits == 0 || digits > 15) {
			throw fail("an integer has 1 to 15 digits");
		}
		if (this.position < this.input.length() && this.input.charAt(this.position) == '.') {
			throw fail("decimals are not integers");
		}
		return Long.parseLong(this.input.substring(start, this.position));
	}

	private void expect(char c) {
		if (this.position >= this.input.length() || this.input.charAt(this.position) != c) {
			throw fail("expected '" + c + "'");
		}
		this.position++;
	}

	private void skip(char c) {
		while (this.position < this.input.length() && this.input.charAt(this.position) == c) {
			this.position++;
		}
	}

	private void skipWhitespace() {
		while (this.position < this.input.length()
				&& (this.input.charAt(this.position) == ' ' || this.input.charAt(this.position) == '\t')) {
			this.position++;
		}
	}

	private IllegalArgumentException fail(String why) {
		return new IllegalArgumentException(why + " at " + this.position + " in: " + this.input);
	}

}
