package io.github.ratelimit.web;

import java.net.InetAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

/**
 * The built-in {@link ClientIpResolver}: the client is the peer of the connection, unless that peer is one of the
 * trusted proxies. Then the one header the proxies write ({@link ForwardedHeader}, {@code X-Forwarded-For} by default)
 * is read from right to left, skipping the trusted proxies, and the first address that is not one of them is the
 * client: what a client writes into that header itself lies to the left of what the proxies appended, so it is never
 * reached while a proxy's own entry is there. No other forwarded header is ever read, not even when the chosen one is
 * missing: proxies pass on the headers they do not write, so those are the client's own.
 * <p>
 * Addresses are parsed as literals, never resolved (nothing a client writes reaches name resolution), and keyed
 * canonically: an IPv4-mapped IPv6 address as its IPv4 address, an IPv6 transition address that carries its client's
 * IPv4 address (6to4, Teredo, NAT64's well-known prefix, IPv4-compatible) as that IPv4 address, other IPv6 addresses
 * by their network of {@code ipv6PrefixLength} bits (a /64 by default, what one subscriber or host is usually given,
 * so that rotating addresses within it buys no quota), IPv4 addresses by their network of {@code ipv4PrefixLength}
 * bits (the address itself by default). A forwarded value that is not an address ({@code unknown}, an obfuscated
 * {@code _identifier}, garbage) never becomes a key: the peer's address is used, and that is logged at WARN at most
 * once per interval.
 * <p>
 * A trusted range wider than a /16 of IPv4 or a /32 of IPv6 is logged at WARN when the resolver is created: any host
 * in it that reaches the application directly can choose its client address. Trusting every address ({@code /0}) is
 * refused.
 *
 * @since 0.1.0
 */
public final class TrustedProxiesClientIpResolver implements ClientIpResolver {

	private static final Log logger = LogFactory.getLog(TrustedProxiesClientIpResolver.class);

	private final List<IpRange> trustedProxies;

	private final ForwardedHeader forwardedHeader;

	private final int ipv4PrefixLength;

	private final int ipv6PrefixLength;

	private final long warningIntervalNanos;

	private final AtomicLong lastWarningAt = new AtomicLong(Long.MIN_VALUE);

	/**
	 * Create a resolver.
	 * @param trustedProxies the proxies whose forwarded header is believed: addresses or CIDR blocks, IPv4 or IPv6
	 * @param forwardedHeader the header those proxies write
	 * @param ipv4PrefixLength the bits of an IPv4 address that make a client, 1 to 32
	 * @param ipv6PrefixLength the bits of an IPv6 address that make a client, 1 to 128
	 * @param warningInterval the least time between two WARN messages about forwarded values that are not addresses
	 * @throws IllegalArgumentException if a trusted proxy is not an address or CIDR block or is every address, or a
	 * prefix length is out of range
	 * @since 0.2.0
	 */
	public TrustedProxiesClientIpResolver(List<String> trustedProxies, ForwardedHeader forwardedHeader,
			int ipv4PrefixLength, int ipv6PrefixLength, Duration warningInterval) {
		List<IpRange> ranges = new ArrayList<>();
		for (String proxy : trustedProxies) {
			IpRange range = IpRange.parse(proxy);
			checkNotTooBroad(range);
			ranges.add(range);
		}
		this.trustedProxies = Collections.unmodifiableList(ranges);
		this.forwardedHeader = forwardedHeader;
		this.ipv4PrefixLength = prefixLength(ipv4PrefixLength, 32, "ipv4PrefixLength");
		this.ipv6PrefixLength = prefixLength(ipv6PrefixLength, 128, "ipv6PrefixLength");
		this.warningIntervalNanos = warningInterval.toNanos();
	}

	/**
	 * Create a resolver that reads {@code X-Forwarded-For} behind the trusted proxies.
	 * @param trustedProxies the proxies whose forwarded header is believed: addresses or CIDR blocks, IPv4 or IPv6
	 * @param ipv4PrefixLength the bits of an IPv4 address that make a client, 1 to 32
	 * @param ipv6PrefixLength the bits of an IPv6 address that make a client, 1 to 128
	 * @param warningInterval the least time between two WARN messages about forwarded values that are not addresses
	 * @throws IllegalArgumentException if a trusted proxy is not an address or CIDR block or is every address, or a
	 * prefix length is out of range
	 */
	public TrustedProxiesClientIpResolver(List<String> trustedProxies, int ipv4PrefixLength, int ipv6PrefixLength,
			Duration warningInterval) {
		this(trustedProxies, ForwardedHeader.X_FORWARDED_FOR, ipv4PrefixLength, ipv6PrefixLength, warningInterval);
	}

	private static void checkNotTooBroad(IpRange range) {
		if (range.prefixLength() == 0) {
			throw new IllegalArgumentException("'" + range + "' trusts every address, so every client could choose "
					+ "its own address; list the addresses or subnets of the proxies in front of the application");
		}
		if (range.prefixLength() < (range.isIpv4() ? 16 : 32)) {
			logger.warn("Trusted proxy range " + range + " is broad: any host in it that reaches the application "
					+ "directly can write a forwarded header and choose its client address (its rate limit key). "
					+ "List the load balancers' own addresses or subnets instead.");
		}
	}

	private static int prefixLength(int length, int bits, String name) {
		if (length < 1 || length > bits) {
			throw new IllegalArgumentException("'" + name + "' must be from 1 to " + bits + " but was " + length);
		}
		return length;
	}

	@Override
	public String resolve(RateLimitRequest request) {
		String remote = request.getRemoteAddr();
		if (remote == null) {
			return ""; // no peer address: nothing a client wrote either
		}
		if (this.trustedProxies.isEmpty() && this.ipv4PrefixLength == 32 && IpAddresses.isCanonicalIpv4(remote)) {
			return remote; // the key as it is: no proxy to look behind, no network to widen it to, nothing to rewrite
		}
		InetAddress peer = IpAddresses.parse(remote);
		if (peer == null) {
			return remote; // the container's own text: not something a client wrote
		}
		if (!isTrusted(peer)) {
			return key(peer);
		}
		List<String> hops = forwardedFor(request);
		for (int i = hops.size() - 1; i >= 0; i--) {
			InetAddress hop = node(hops.get(i));
			if (hop == null) {
				warn(hops.get(i), remote);
				return key(peer);
			}
			if (!isTrusted(hop) || i == 0) {
				return key(hop); // the first untrusted hop; or, when every hop is a trusted proxy, the farthest one
			}
		}
		return key(peer);
	}

	private boolean isTrusted(InetAddress address) {
		for (IpRange range : this.trustedProxies) {
			if (range.contains(address)) {
				return true;
			}
		}
		return false;
	}

	private String key(InetAddress address) {
		InetAddress client = IpAddresses.client(address);
		return IpAddresses.network(client, IpAddresses.isIpv4(client) ? this.ipv4PrefixLength : this.ipv6PrefixLength);
	}

	/** The entries of every instance of the forwarded header, in order. */
	private List<String> forwardedFor(RateLimitRequest request) {
		List<String> hops = new ArrayList<>();
		for (String header : request.getHeaders(this.forwardedHeader.headerName())) {
			for (String element : header.split(",")) {
				hops.add((this.forwardedHeader == ForwardedHeader.FORWARDED) ? forParameter(element) : element.trim());
			}
		}
		if (this.forwardedHeader == ForwardedHeader.X_REAL_IP && hops.size() > 1) {
			// One address, set by the proxy: several mean the proxy appended to what the client sent.
			return List.of(hops.get(hops.size() - 1));
		}
		return hops;
	}

	/**
	 * The value of the {@code for} parameter of one {@code Forwarded} element, unquoted; {@code ""} if it has none.
	 */
	private static String forParameter(String element) {
		for (String pair : element.split(";")) {
			int equals = pair.indexOf('=');
			if (equals > 0 && pair.substring(0, equals).trim().equalsIgnoreCase("for")) {
				String value = pair.substring(equals + 1).trim();
				if (value.length() >= 2 && value.startsWith("\"") && value.endsWith("\"")) {
					value = value.substring(1, value.length() - 1);
				}
				return value;
			}
		}
		return "";
	}

	/**
	 * Parse a forwarded node: {@code 192.0.2.1}, {@code 192.0.2.1:8080}, {@code [2001:db8::1]},
	 * {@code [2001:db8::1]:8080} or a bare IPv6 address; {@code null} for anything else.
	 */
	private static @Nullable InetAddress node(String node) {
		String text = node.trim();
		if (text.startsWith("[")) {
			int close = text.indexOf(']');
			if (close < 0 || (close + 1 < text.length() && !isPort(text.substring(close + 1)))) {
				return null;
			}
			return IpAddresses.parse(text.substring(1, close));
		}
		int colon = text.indexOf(':');
		if (colon >= 0 && colon == text.lastIndexOf(':')) {
			return isPort(text.substring(colon)) ? IpAddresses.parse(text.substring(0, colon)) : null;
		}
		return IpAddresses.parse(text);
	}

	private static boolean isPort(String text) {
		return text.length() > 1 && text.length() <= 6 && text.charAt(0) == ':'
				&& text.substring(1).chars().allMatch(Character::isDigit);
	}

	private void warn(String value, String peer) {
		long now = System.nanoTime();
		long last = this.lastWarningAt.get();
		if ((last == Long.MIN_VALUE || now - last >= this.warningIntervalNanos)
				&& this.lastWarningAt.compareAndSet(last, now)) {
			logger.warn("A forwarded client address from trusted proxy " + peer + " is not an IP address ("
					+ ((value.length() > 64) ? value.substring(0, 64) + "..." : value).replaceAll("\\p{Cntrl}", "?")
					+ "); the proxy's address is the key of this request. Logged at most once per interval.");
		}
	}

}
