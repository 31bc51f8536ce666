package io.github.ratelimit.autoconfigure;

import java.util.ArrayList;
import java.util.List;

import io.github.ratelimit.web.ForwardedHeader;
import io.github.ratelimit.web.IpRange;

import org.springframework.boot.context.properties.source.InvalidConfigurationPropertyValueException;

/**
 * How the client's IP address, the default key, is found ({@code ratelimit.client-ip}).
 */
public class ClientIpProperties {

	/**
	 * Proxies whose forwarded header (see forwarded-header) is believed, as IP addresses or CIDR blocks (IPv4 or
	 * IPv6): the load balancers' own addresses or subnets. When the connection comes from one of them, the chain
	 * is read from right to left, skipping trusted proxies; the first other address is the client. Empty by
	 * default: the client is the connection's peer, and no forwarded header is read. A range wider than a /16 of
	 * IPv4 or a /32 of IPv6 is logged at WARN; every address (/0) fails start-up.
	 */
	private List<String> trustedProxies = new ArrayList<>();

	/**
	 * The one header the trusted proxies write the client's address into, and the only one read: x-forwarded-for
	 * (nginx, HAProxy, Envoy, Traefik, cloud load balancers, Cloudflare), forwarded (RFC 7239) or x-real-ip (one
	 * address, set by a single proxy). Never another in its place: proxies pass on headers they do not write.
	 */
	private ForwardedHeader forwardedHeader = ForwardedHeader.X_FORWARDED_FOR;

	/**
	 * Bits of an IPv4 address that make one client (32: each address is a client).
	 */
	private int ipv4PrefixLength = 32;

	/**
	 * Bits of an IPv6 address that make one client (64: one subscriber's or host's network, so that rotating
	 * addresses within it buys no quota).
	 */
	private int ipv6PrefixLength = 64;

	/**
	 * Clients no policy keyed by the client IP applies to (health checkers, internal callers), as IP addresses
	 * or CIDR blocks. Policies with a key expression still apply to them.
	 */
	private List<String> exempt = new ArrayList<>();

	public List<String> getExempt() {
		return this.exempt;
	}

	public void setExempt(List<String> exempt) {
		this.exempt = exempt;
	}

	public List<String> getTrustedProxies() {
		return this.trustedProxies;
	}

	public void setTrustedProxies(List<String> trustedProxies) {
		this.trustedProxies = trustedProxies;
	}

	public ForwardedHeader getForwardedHeader() {
		return this.forwardedHeader;
	}

	public void setForwardedHeader(ForwardedHeader forwardedHeader) {
		this.forwardedHeader = forwardedHeader;
	}

	public int getIpv4PrefixLength() {
		return this.ipv4PrefixLength;
	}

	public void setIpv4PrefixLength(int ipv4PrefixLength) {
		this.ipv4PrefixLength = ipv4PrefixLength;
	}

	public int getIpv6PrefixLength() {
		return this.ipv6PrefixLength;
	}

	public void setIpv6PrefixLength(int ipv6PrefixLength) {
		this.ipv6PrefixLength = ipv6PrefixLength;
	}

	void validate() {
		for (int i = 0; i < this.trustedProxies.size(); i++) {
			String proxy = this.trustedProxies.get(i);
			IpRange range;
			try {
				range = IpRange.parse(proxy);
			}
			catch (IllegalArgumentException ex) {
				throw new InvalidConfigurationPropertyValueException("ratelimit.client-ip.trusted-proxies[" + i + "]",
						proxy, ex.getMessage());
			}
			if (range.prefixLength() == 0) {
				throw new InvalidConfigurationPropertyValueException("ratelimit.client-ip.trusted-proxies[" + i + "]",
						proxy, "Trusting every address lets every client choose its own address. List the addresses "
								+ "or subnets of the proxies in front of the application.");
			}
		}
		for (int i = 0; i < this.exempt.size(); i++) {
			String network = this.exempt.get(i);
			try {
				IpRange.parse(network);
			}
			catch (IllegalArgumentException ex) {
				throw new InvalidConfigurationPropertyValueException("ratelimit.client-ip.exempt[" + i + "]",
						network, ex.getMessage());
			}
		}
		if (this.ipv4PrefixLength < 1 || this.ipv4PrefixLength > 32) {
			throw new InvalidConfigurationPropertyValueException("ratelimit.client-ip.ipv4-prefix-length",
					this.ipv4PrefixLength, "Must be from 1 to 32.");
		}
		if (this.ipv6PrefixLength < 1 || this.ipv6PrefixLength > 128) {
			throw new InvalidConfigurationPropertyValueException("ratelimit.client-ip.ipv6-prefix-length",
					this.ipv6PrefixLength, "Must be from 1 to 128.");
		}
	}

}
