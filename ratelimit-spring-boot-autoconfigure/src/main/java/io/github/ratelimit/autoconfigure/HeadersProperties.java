package io.github.ratelimit.autoconfigure;

import java.util.ArrayList;
import java.util.List;

import io.github.ratelimit.web.RateLimitHeaderStyle;

/**
 * Which rate limit headers responses carry ({@code ratelimit.headers}).
 */
public class HeadersProperties {

	/**
	 * Header styles, one or several: 'draft-6' (RateLimit-Limit, RateLimit-Remaining, RateLimit-Reset in delta
	 * seconds), 'draft-11' (RateLimit-Policy and RateLimit structured fields listing every policy that applied,
	 * with t the effective window; 'draft-10' is the same wire format), 'x-ratelimit' (X-RateLimit-Limit,
	 * X-RateLimit-Remaining, X-RateLimit-Reset), or 'none'. Retry-After is sent on every 429 and 503 whatever the
	 * style.
	 */
	private List<RateLimitHeaderStyle> style = new ArrayList<>(List.of(RateLimitHeaderStyle.DRAFT_6));

	/**
	 * Whether headers show the state of quotas whose key is the same for every client (an application-wide quota,
	 * key: "'application'"). Off by default: any client could otherwise watch the whole application's traffic.
	 * A request such a quota rejects still gets Retry-After.
	 */
	private boolean showSharedQuotas;

	/**
	 * How X-RateLimit-Reset gives the reset: 'delta-seconds' (seconds from now, like the other headers) or
	 * 'epoch-seconds' (a Unix time).
	 */
	private RateLimitHeaderStyle.ResetFormat resetFormat = RateLimitHeaderStyle.ResetFormat.DELTA_SECONDS;

	public List<RateLimitHeaderStyle> getStyle() {
		return this.style;
	}

	public void setStyle(List<RateLimitHeaderStyle> style) {
		this.style = style;
	}

	public RateLimitHeaderStyle.ResetFormat getResetFormat() {
		return this.resetFormat;
	}

	public boolean isShowSharedQuotas() {
		return this.showSharedQuotas;
	}

	public void setShowSharedQuotas(boolean showSharedQuotas) {
		this.showSharedQuotas = showSharedQuotas;
	}

	public void setResetFormat(RateLimitHeaderStyle.ResetFormat resetFormat) {
		this.resetFormat = resetFormat;
	}

}
