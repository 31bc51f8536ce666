package io.github.ratelimit.web;

import java.net.InetAddress;
import java.util.ArrayList;
import java.util.List;

/**
 * Networks whose clients no policy keyed by the client IP applies to ({@code ratelimit.client-ip.exempt}): health
 * checkers, internal callers. Matched against the client's key as the {@link ClientIpResolver} gave it (an address,
 * or the network of an IPv6 client, which is exempt when its network lies in an exempt range).
 *
 * @since 0.2.0
 */
public final class ClientExemptions {

	/** No exempt network. */
	public static final ClientExemptions NONE = new ClientExemptions(List.of());

	private final List<IpRange> ranges;

	private ClientExemptions(List<IpRange> ranges) {
		this.ranges = List.copyOf(ranges);
	}

	/**
	 * Parse the exempt networks.
	 * @param networks IP addresses or CIDR blocks
	 * @return the exemptions
	 * @throws IllegalArgumentException naming the first entry that is not an address or CIDR block
	 */
	public static ClientExemptions of(List<String> networks) {
		List<IpRange> ranges = new ArrayList<>(networks.size());
		for (String network : networks) {
			ranges.add(IpRange.parse(network));
		}
		return new ClientExemptions(ranges);
	}

	/**
	 * Return whether there is no exempt network.
	 * @return whether none is exempt
	 */
	public boolean isEmpty() {
		return this.ranges.isEmpty();
	}

	/**
	 * Return whether the client of this key is exempt.
	 * @param clientKey the client's key from the resolver: an address, or a network such as
	 * {@code 2001:db8:1:2::/64}
	 * @return whether it is exempt
	 */
	public boolean contains(String clientKey) {
		int slash = clientKey.indexOf('/');
		InetAddress address = IpAddresses.parse((slash >= 0) ? clientKey.substring(0, slash) : clientKey);
		if (address == null) {
			return false;
		}
		int networkLength = address.getAddress().length * 8;
		if (slash >= 0) {
			try {
				networkLength = Integer.parseInt(clientKey.substring(slash + 1));
			}
			catch (NumberFormatException ex) {
				return false;
			}
		}
		for (IpRange range : this.ranges) {
			// The client's whole network must be exempt, not just its first address.
			if (range.prefixLength() <= networkLength && range.contains(address)) {
				return true;
			}
		}
		return false;
	}

}
