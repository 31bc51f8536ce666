package io.github.ratelimit.store;

import java.net.URLDecoder;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The changes made to policies at run time, kept where every instance sharing a store reads them: so that a change
 * made through one instance reaches the others (each reads them about once a second) and an instance that starts
 * later starts with them. Values are kept as text, by attribute ({@code limit}, {@code window}, ...), and mean what
 * the properties of the same names mean.
 *
 * @since 0.3.0
 */
public interface SharedChanges {

	/**
	 * Keep a policy's change, replacing the one kept before; an empty change drops it.
	 * @param policy the policy's name
	 * @param values by attribute, the values changed
	 * @throws RateLimitStoreException if the store cannot be reached
	 */
	void put(String policy, Map<String, String> values);

	/**
	 * Return every change kept.
	 * @return by policy name, the values changed
	 * @throws RateLimitStoreException if the store cannot be reached
	 */
	Map<String, Map<String, String>> readAll();

	/**
	 * Encode a change as one line of text: {@code attribute=value} pairs, each part percent-encoded.
	 * @param values the values
	 * @return the text
	 */
	static String encode(Map<String, String> values) {
		StringBuilder text = new StringBuilder();
		values.forEach((attribute, value) -> {
			if (!text.isEmpty()) {
				text.append('&');
			}
			text.append(URLEncoder.encode(attribute, StandardCharsets.UTF_8))
				.append('=')
				.append(URLEncoder.encode(value, StandardCharsets.UTF_8));
		});
		return text.toString();
	}

	/**
	 * Decode a change encoded by {@link #encode}; parts that are not {@code attribute=value} are left out.
	 * @param text the text
	 * @return the values, in their order
	 */
	static Map<String, String> decode(String text) {
		Map<String, String> values = new LinkedHashMap<>();
		for (String pair : text.split("&")) {
			int equals = pair.indexOf('=');
			if (equals > 0) {
				try {
					values.put(URLDecoder.decode(pair.substring(0, equals), StandardCharsets.UTF_8),
							URLDecoder.decode(pair.substring(equals + 1), StandardCharsets.UTF_8));
				}
				catch (IllegalArgumentException ex) {
					// not a pair this encodes: left out
				}
			}
		}
		return values;
	}

}
