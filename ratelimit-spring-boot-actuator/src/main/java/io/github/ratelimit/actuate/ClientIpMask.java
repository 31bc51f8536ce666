package io.github.ratelimit.actuate;

import java.util.regex.Pattern;

/**
 * Masks keys that are client addresses, as the limiter keys them, in what the endpoint shows: an IPv4 address keeps
 * its first three bytes ({@code 203.0.113.x}); an IPv6 address or network keeps its first 48 bits
 * ({@code 2001:db8:1:x}). Other keys are shown as they are.
 */
final class ClientIpMask {

	private static final Pattern IPV4 = Pattern.compile("(\\d{1,3}\\.\\d{1,3}\\.\\d{1,3})\\.\\d{1,3}(/\\d{1,2})?");

	private static final Pattern IPV6 = Pattern.compile("([0-9a-fA-F]{0,4}:[0-9a-fA-F]{0,4}:[0-9a-fA-F]{0,4}):[0-9a-fA-F:.]*(/\\d{1,3})?");

	/** The namespace of a key expression's fallback to the client's address. */
	private static final String FALLBACK = "#ip:";

	private ClientIpMask() {
	}

	static String mask(String key) {
		if (key.startsWith(FALLBACK)) {
			return FALLBACK + mask(key.substring(FALLBACK.length()));
		}
		var ipv4 = IPV4.matcher(key);
		if (ipv4.matches()) {
			return ipv4.group(1) + ".x";
		}
		var ipv6 = IPV6.matcher(key);
		if (ipv6.matches()) {
			return ipv6.group(1) + ":x";
		}
		return key;
	}

}
