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
		boolean ipv6 = literal.indexOf(':') >= 0;
		if (ipv6 ? !isIpv6Text(literal) : !isIpv4Text(literal)) {
			return null; // checked first, so that InetAddress never takes it for a host name to resolve
		}
		try {
			return InetAddress.getByName(literal);
		}
		catch (UnknownHostException ex) {
			return null;
		}
	}

	private static boolean isIpv4Text(String text) {
		String[] parts = text.split("\\.", -1);
		if (parts.length != 4) {
			return false;
		}
		for (String part : parts) {
			if (part.isEmpty() || part.length() > 3 || !part.chars().allMatch(Character::isDigit)
					|| Integer.parseInt(part) > 255) {
				return false;
			}
		}
		return true;
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
