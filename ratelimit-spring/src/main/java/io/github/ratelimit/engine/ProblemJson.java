package io.github.ratelimit.engine;

import java.net.URI;
import java.util.Map;

import org.jspecify.annotations.Nullable;

import org.springframework.http.ProblemDetail;

/**
 * An RFC 9457 problem as JSON, for the filter layer and gateway routes, which answer before any message converter
 * runs. Only what the limiter's problems hold: text, numbers and lists of them. Every string is escaped, the instance
 * too: it is the request's path, which the client chose.
 */
final class ProblemJson {

	private ProblemJson() {
	}

	/**
	 * Write the problem, naming the request's path as its instance unless it names one itself, as Spring does for the
	 * problems its converters write (the method layer's).
	 */
	static String write(ProblemDetail problem, String instance) {
		StringBuilder json = new StringBuilder(256).append('{');
		URI type = problem.getType();
		member(json, "type", (type != null) ? type.toString() : null);
		member(json, "title", problem.getTitle());
		member(json, "status", problem.getStatus());
		member(json, "detail", problem.getDetail());
		URI own = problem.getInstance();
		member(json, "instance", (own != null) ? own.toString() : instance);
		Map<String, Object> properties = problem.getProperties();
		if (properties != null) {
			properties.forEach((name, value) -> member(json, name, value));
		}
		return json.append('}').toString();
	}

	private static void member(StringBuilder json, String name, @Nullable Object value) {
		if (value == null) {
			return;
		}
		if (json.length() > 1) {
			json.append(',');
		}
		string(json, name);
		json.append(':');
		value(json, value);
	}

	private static void value(StringBuilder json, Object value) {
		if (value instanceof Number || value instanceof Boolean) {
			json.append(value);
		}
		else if (value instanceof Iterable<?> items) {
			json.append('[');
			boolean first = true;
			for (Object item : items) {
				if (!first) {
					json.append(',');
				}
				first = false;
				if (item == null) {
					json.append("null");
				}
				else {
					value(json, item);
				}
			}
			json.append(']');
		}
		else {
			string(json, value.toString());
		}
	}

	private static void string(StringBuilder json, String text) {
		json.append('"');
		for (int i = 0; i < text.length(); i++) {
			char c = text.charAt(i);
			switch (c) {
				case '"' -> json.append("\\\"");
				case '\\' -> json.append("\\\\");
				case '\n' -> json.append("\\n");
				case '\r' -> json.append("\\r");
				case '\t' -> json.append("\\t");
				default -> {
					if (c < 0x20 || c == 0x2028 || c == 0x2029) {
						json.append(String.format("\\u%04x", (int) c));
					}
					else {
						json.append(c);
					}
				}
			}
		}
		json.append('"');
	}

}
