package io.github.ratelimit.web;

import java.net.Inet4Address;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.Arrays;

import org.jspecify.annotations.Nullable;

/**
 * Parses IP address literals into their bytes, never handing text to {@link InetAddress} (which resolves anything
 * it does not take for a literal), and writes them in one canonical text. {@code ::ffff:1.2.3.4} is
 * {@code 1.2.3.4}, {@code 2001:DB8:0::1} is {@code 2001:db8:0:0:0:0:0:1}.
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
		byte[] bytes = (literal.indexOf(':') < 0) ? ipv4(literal) : ipv6(literal);
		if (bytes == null) {
			return null;
		}
		try {
			// From its bytes, never from text: nothing a client wrote reaches name resolution.
			return InetAddress.getByAddress(bytes);
		}
		catch (UnknownHostException ex) {
			throw new IllegalStateException("an address of 4 or 16 bytes is always valid", ex);
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

	/**
	 * The bytes of an IPv6 literal as RFC 4291 writes them: eight groups of one to four hex digits, at most one
	 * {@code ::} standing for one or more groups of zeros, the last two groups possibly a dotted-quad IPv4 address;
	 * no zone, no brackets.
	 */
	private static byte @Nullable [] ipv6(String text) {
		int gap = text.indexOf("::");
		if (gap >= 0 && text.indexOf("::", gap + 1) >= 0) {
			return null;
		}
		int[] words = new int[8];
		if (gap < 0) {
			if (words(text, words, true) != 8) {
				return null;
			}
		}
		else {
			int head = words(text.substring(0, gap), words, false);
			int[] tailWords = new int[8];
			int tail = words(text.substring(gap + 2), tailWords, true);
			if (head < 0 || tail < 0 || head + tail > 7) {
				return null;
			}
			System.arraycopy(tailWords, 0, words, 8 - tail, tail);
		}
		byte[] bytes = new byte[16];
		for (int i = 0; i < 8; i++) {
			bytes[2 * i] = (byte) (words[i] >>> 8);
			bytes[2 * i + 1] = (byte) words[i];
		}
		return bytes;
	}

	/**
	 * Read colon-separated groups of hex digits into {@code words}, the last one possibly a dotted-quad IPv4 address
	 * (two words).
	 * @return how many words, or -1 if the text is not such groups
	 */
	private static int words(String text, int[] words, boolean ipv4Last) {
		if (text.isEmpty()) {
			return 0;
		}
		String[] groups = text.split(":", -1);
		int count = 0;
		for (int i = 0; i < groups.length; i++) {
			String group = groups[i];
			if (ipv4Last && i == groups.length - 1 && group.indexOf('.') >= 0) {
				byte[] ipv4 = ipv4(group);
				if (ipv4 == null || count + 2 > 8) {
					return -1;
				}
				words[count++] = ((ipv4[0] & 0xFF) << 8) | (ipv4[1] & 0xFF);
				words[count++] = ((ipv4[2] & 0xFF) << 8) | (ipv4[3] & 0xFF);
				continue;
			}
			if (group.isEmpty() || group.length() > 4 || count == 8) {
				return -1;
			}
			int word = 0;
			for (int j = 0; j < group.length(); j++) {
				int digit = Character.digit(group.charAt(j), 16);
				if (digit < 0 || group.charAt(j) > 'f') {
					return -1; // Character.digit also takes other scripts' digits
				}
				word = (word << 4) | digit;
			}
			words[count++] = word;
		}
		return count;
	}

	/**
	 * Return the IPv4 address a transition address carries for its client, or the address itself: 6to4
	 * ({@code 2002::/16}, the site's IPv4 address), NAT64's well-known prefix ({@code 64:ff9b::/96}), Teredo
	 * ({@code 2001::/32}, the client's obfuscated public address) and IPv4-compatible addresses ({@code ::a.b.c.d}).
	 * Keyed by their IPv6 network, these would give one IPv4 client 2<sup>16</sup> networks (6to4) or put many
	 * behind one (Teredo, NAT64).
	 */
	static InetAddress client(InetAddress address) {
		byte[] bytes = address.getAddress();
		if (bytes.length != 16) {
			return address;
		}
		byte[] ipv4 = null;
		if (bytes[0] == 0x20 && bytes[1] == 0x02) {
			ipv4 = Arrays.copyOfRange(bytes, 2, 6);
		}
		else if (bytes[0] == 0x20 && bytes[1] == 0x01 && bytes[2] == 0 && bytes[3] == 0) {
			ipv4 = Arrays.copyOfRange(bytes, 12, 16);
			for (int i = 0; i < 4; i++) {
				ipv4[i] = (byte) ~ipv4[i];
			}
		}
		else if (isZero(bytes, 0, 12) && !isZero(bytes, 12, 15)) {
			ipv4 = Arrays.copyOfRange(bytes, 12, 16); // ::a.b.c.d, not :: or ::1
		}
		else if (bytes[0] == 0 && bytes[1] == 0x64 && bytes[2] == (byte) 0xff && bytes[3] == (byte) 0x9b
				&& isZero(bytes, 4, 12)) {
			ipv4 = Arrays.copyOfRange(bytes, 12, 16);
		}
		if (ipv4 == null) {
			return address;
		}
		try {
			return InetAddress.getByAddress(ipv4);
		}
		catch (UnknownHostException ex) {
			throw new IllegalStateException("an address of 4 bytes is always valid", ex);
		}
	}

	private static boolean isZero(byte[] bytes, int from, int to) {
		for (int i = from; i < to; i++) {
			if (bytes[i] != 0) {
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
