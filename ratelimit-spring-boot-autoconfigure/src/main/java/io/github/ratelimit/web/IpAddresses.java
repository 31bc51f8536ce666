package io.github.ratelimit.web;

import java.net.Inet4Address;
import java.net.InetAddress;
import java.net.UnknownHostException;

import org.jspecify.annotations.Nullable;

/**
 * Parses IP address literals without ever asking DNS, and writes them in one canonical text. {@code ::ffff:1.2.3.4}
 * is {@code 1.2.3.4}, {@code 2001:DB8:0::1} is {@code 2001:db8:0:0:0:0:0:1}.
 */
final class IpAddresses {

	private IpAddresses() {
	}

	/**
	 * Parse an IPv4 literal ({@code 192.0.2.1}) or an IPv6 literal ({@code 2001:db8::1}, {@code ::ffff:192.0.2.1},
	 * optionally in brackets), or return {@code null} for anything else: host names, zones, ports, garbage.
	 */
	static @Nullable InetAddress parse(@Nullable String text) {
		if (text == null) {
			return null;
		}
		String literal = text.trim();
		if (literal.startsWith("[") && literal.endsWith("]")) {
			literal = literal.substring(1, literal.length() - 1);
		}
		if (literal.isEmpty() || literal.length() > 45) {
			return null;
		}
		if (literal.indexOf(':') < 0) {
			byte[] ipv4 = ipv4(literal);
			try {
				// From its bytes, never from text: no host name lookup, and no parsing twice on every request.
				return (ipv4 != null) ? InetAddress.getByAddress(ipv4) : null;
			}
			catch (UnknownHostException ex) {
				throw new IllegalStateException("an address of 4 bytes is always valid", ex);
			}
		}
		if (!isIpv6Text(literal)) {
			return null; // checked first, so that InetAddress never takes it for a host name to resolve
		}
		try {
			return InetAddress.getByName(literal);
		}
		catch (UnknownHostException ex) {
			return null;
		}
	}

	/**
	 * Whether the text is an IPv4 address as {@link InetAddress#getHostAddress()} writes it: four decimal parts, each
	 * at most 255, without leading zeros or anything around them.
	 */
	static boolean isCanonicalIpv4(@Nullable String text) {
		return text != null && parseIpv4(text, null, true);
	}

	/** The bytes of a dotted-quad IPv4 literal (four decimal parts of one to three digits, each at most 255). */
	private static byte @Nullable [] ipv4(String text) {
		byte[] bytes = new byte[4];
		return parseIpv4(text, bytes, false) ? bytes : null;
	}

	/**
	 * Read a dotted-quad IPv4 literal into {@code bytes}, if given.
	 * @param canonical whether a part with a leading zero makes it invalid
	 * @return whether the text is one
	 */
	private static boolean parseIpv4(String text, byte @Nullable [] bytes, boolean canonical) {
		int part = 0;
		int value = 0;
		int digits = 0;
		for (int i = 0; i <= text.length(); i++) {
			char c = (i < text.length()) ? text.charAt(i) : '.';
			if (c == '.') {
				if (digits == 0 || part == 4) {
					return false;
				}
				if (bytes != null) {
					bytes[part] = (byte) value;
				}
				part++;
				value = 0;
				digits = 0;
			}
			else if (c >= '0' && c <= '9' && digits < 3 && !(canonical && digits == 1 && value == 0)) {
				value = value * 10 + (c - '0');
				digits++;
				if (value > 255) {
					return false;
				}
			}
			else {
				return false;
			}
		}
		return part == 4;
	}

	private static boolean isIpv6Text(String text) {
		for (int i = 0; i < text.length(); i++) {
			char c = text.charAt(i);
			boolean hex = (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
			if (!hex && c != ':' && c != '.') {
				return false;
			}
		}
		return true;
	}

	/**
	 * Return the network of {@code prefixLength} bits that holds the address, as the canonical text of its first
	 * address followed by {@code /prefixLength}, or the address alone when the prefix is the whole address.
	 */
	static String network(InetAddress address, int prefixLength) {
		byte[] bytes = address.getAddress();
		int bits = bytes.length * 8;
		if (prefixLength >= bits) {
			return address.getHostAddress();
		}
		byte[] masked = mask(bytes, prefixLength);
		try {
			return InetAddress.getByAddress(masked).getHostAddress() + "/" + prefixLength;
		}
		catch (UnknownHostException ex) {
			throw new IllegalStateException("an address of " + masked.length + " bytes is always valid", ex);
		}
	}

	static byte[] mask(byte[] bytes, int prefixLength) {
		byte[] masked = bytes.clone();
		for (int i = 0; i < masked.length; i++) {
			int keep = Math.max(0, Math.min(8, prefixLength - i * 8));
			masked[i] = (byte) (masked[i] & (0xFF << (8 - keep)));
		}
		return masked;
	}

	static boolean isIpv4(InetAddress address) {
		return address instanceof Inet4Address;
	}

}
