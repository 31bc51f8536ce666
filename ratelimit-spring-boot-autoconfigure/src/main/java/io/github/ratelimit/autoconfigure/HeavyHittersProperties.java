package io.github.ratelimit.autoconfigure;

/**
 * Who is being limited: the heaviest keys of each policy lately, shown by the ratelimits endpoint.
 */
public class HeavyHittersProperties {

	/**
	 * Whether each policy keeps a small sketch of its heaviest keys (32 counters per outcome and thread stripe,
	 * over the last 2.5 to 5 minutes), shown by the endpoint as keyed fingerprints unless show-keys.
	 */
	private boolean enabled = true;

	/**
	 * Whether the endpoint masks keys that are IP addresses (the last byte of IPv4, all but the first 48 bits of
	 * IPv6) even where show-keys grants raw keys; without show-keys they are always masked.
	 */
	private boolean maskClientIp = true;

	public boolean isEnabled() {
		return this.enabled;
	}

	public void setEnabled(boolean enabled) {
		this.enabled = enabled;
	}

	public boolean isMaskClientIp() {
		return this.maskClientIp;
	}

	public void setMaskClientIp(boolean maskClientIp) {
		this.maskClientIp = maskClientIp;
	}

}
