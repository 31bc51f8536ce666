package io.github.ratelimit.web;

import java.net.InetAddress;
import java.util.Arrays;

/**
 * An IP address or a CIDR block ({@code 10.0.0.0/8}, {@code 2001:db8::/32}) of IPv4 or IPv6 addresses. An IPv4
 * block also holds the IPv4-mapped IPv6 forms of its addresses, since those parse as IPv4. Host names are never
 * resolved.
 *
 * @since 0.1.0
 */
public final class IpRange {

	private final byte[] network;

	private final int prefixLength;

	private final String text;

	private IpRange(byte[] network, int prefixLength, String text) {
		this.network = network;
		this.prefixLength = prefixLength;
		this.text = text;
	}

	/**
	 * Parse an address or a CIDR block.
	 * @param text the address or block
	 * @return the range
	 * @throws IllegalArgumentException naming what is wrong, if it is neither
	 */
	public static IpRange parse(String text) {
		String trimmed = text.trim();
		int slash = trimmed.indexOf('/');
		InetAddress address = IpAddresses.parse((slash >= 0) ? trimmed.substring(0, slash) : trimmed);
		if (address == null) {
			throw new IllegalArgumentException("'" + text + "' is not an IP address or a CIDR block such as 10.0.0.0/8 "
					+ "or 2001:db8::/32 (host names are not resolved)");
		}
		int bits = address.getAddress().length * 8;
		int prefixLength = bits;
		if (slash >= 0) {
			String length = trimmed.substring(slash + 1);
			if (length.isEmpty() || length.length() > 3 || !length.chars().allMatch(Character::isDigit)
					|| Integer.parseInt(length) > bits) {
				throw new IllegalArgumentException("'" + text + "' has a prefix length that is not a number from 0 to "
						+ bits);
			}
			prefixLength = Integer.parseInt(length);
		}
		return new IpRange(IpAddresses.mask(address.getAddress(), prefixLength), prefixLength, trimmed);
	}

	/**
	 * Return the number of leading bits that define this range.
	 * @return the prefix length
	 */
	public int prefixLength() {
		return this.prefixLength;
	}

	/**
	 * Return whether this is a range of IPv4 addresses.
	 * @return whether it is IPv4
	 * @since 0.2.0
	 */
	public boolean isIpv4() {
		return this.network.length == 4;
	}

	/**
	 * Return whether the address lies in this range.
	 * @param address the address
	 * @return whether it lies in the range
	 */
	public boolean contains(InetAddress address) {
		byte[] bytes = address.getAddress();
		return bytes.length == this.network.length
				&& Arrays.equals(IpAddresses.mask(bytes, this.prefixLength), this.network);
	}

	@Override
	public String toString() {
		return this.text;
	}

}
