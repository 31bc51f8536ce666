package io.github.ratelimit.client;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

import org.jspecify.annotations.Nullable;

import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpStatusCode;

/**
 * What a called service says of its limits in a response: how long to hold off, and its most restrictive quota. The
 * hold-off is the longest of {@code Retry-After} in delay seconds on a 429 or 503 (an HTTP-date is left to
 * {@link RetryAfterInterceptor}), {@code RateLimit: ...;r=0;t=<s>} of drafts 8 to 11, and {@code RateLimit-Remaining: 0}
 * with {@code RateLimit-Reset} of draft 6 (delay seconds, or epoch seconds as some services send it). The quota is
 * the lowest rate of {@code RateLimit-Policy: ...;q=<n>;w=<s>} counted in requests. A value that does not parse says
 * nothing: a callee's header never fails a call.
 *
 * @param holdOffSeconds how long to send nothing, 0 for no hold-off
 * @param quota the callee's most restrictive quota, or {@code null} if it sent none
 */
record CalleeLimits(long holdOffSeconds, @Nullable Quota quota) {

	/** The longest hold-off believed: a day. A callee asking more is answered by the policy's own limits. */
	static final long MAX_HOLD_OFF_SECONDS = 86_400;

	/** The longest header read: a field longer than this is no limit of a sane service. */
	private static final int MAX_FIELD_LENGTH = 4_096;

	/** Above this, a reset is a time (epoch seconds, as some services send it), not a delay. */
	private static final long EPOCH_SECONDS_FROM = 1_000_000_000L;

	static CalleeLimits of(HttpStatusCode status, HttpHeaders headers, long nowMillis) {
		long holdOff = 0;
		if (status.value() == 429 || status.value() == 503) {
			holdOff = Math.max(holdOff, seconds(headers.getFirst(HttpHeaders.RETRY_AFTER)));
		}
		for (List<Param> item : items(headers.getFirst("RateLimit"))) {
			Long remaining = number(item, "r");
			Long reset = number(item, "t");
			if (remaining != null && remaining == 0 && reset != null) {
				holdOff = Math.max(holdOff, reset);
			}
		}
		Long remaining = parse(headers.getFirst("RateLimit-Remaining"));
		Long reset = parse(headers.getFirst("RateLimit-Reset"));
		if (remaining != null && remaining == 0 && reset != null) {
			holdOff = Math.max(holdOff, (reset >= EPOCH_SECONDS_FROM) ? Math.max(0, reset - nowMillis / 1000) : reset);
		}
		Quota quota = null;
		for (List<Param> item : items(headers.getFirst("RateLimit-Policy"))) {
			Long limit = number(item, "q");
			Long window = number(item, "w");
			String unit = text(item, "qu");
			if (limit != null && window != null && window > 0 && (unit == null || unit.equals("requests"))) {
				Quota candidate = new Quota(limit, window);
				if (quota == null || candidate.perSecond() < quota.perSecond()) {
					quota = candidate;
				}
			}
		}
		return new CalleeLimits(Math.min(holdOff, MAX_HOLD_OFF_SECONDS), quota);
	}

	/** Delay seconds; an HTTP-date is left to the Retry-After interceptor, which reads it for its retries. */
	private static long seconds(@Nullable String value) {
		Long seconds = parse(value);
		return (seconds != null) ? seconds : 0;
	}

	private static @Nullable Long parse(@Nullable String value) {
		if (value == null) {
			return null;
		}
		String text = value.trim();
		if (text.isEmpty() || text.length() > 15 || !text.chars().allMatch(Character::isDigit)) {
			return null;
		}
		return Long.parseLong(text);
	}

	/** A structured field list's members, each as its parameters (the member's own value is not needed). */
	private static List<List<Param>> items(@Nullable String field) {
		List<List<Param>> items = new ArrayList<>();
		if (field == null || field.length() > MAX_FIELD_LENGTH) {
			return items;
		}
		for (String member : field.split(",")) {
			List<Param> params = new ArrayList<>();
			String[] parts = member.split(";");
			for (int i = 1; i < parts.length; i++) {
				int equals = parts[i].indexOf('=');
				if (equals > 0) {
					params.add(new Param(parts[i].substring(0, equals).trim().toLowerCase(Locale.ROOT),
							parts[i].substring(equals + 1).trim()));
				}
			}
			items.add(params);
		}
		return items;
	}

	private static @Nullable Long number(List<Param> params, String name) {
		for (Param param : params) {
			if (param.name().equals(name)) {
				return parse(param.value());
			}
		}
		return null;
	}

	private static @Nullable String text(List<Param> params, String name) {
		for (Param param : params) {
			if (param.name().equals(name)) {
				String value = param.value();
				return (value.length() >= 2 && value.startsWith("\"") && value.endsWith("\""))
						? value.substring(1, value.length() - 1) : value;
			}
		}
		return null;
	}

	private record Param(String name, String value) {
	}

	/**
	 * A callee's quota: {@code limit} requests per {@code windowSeconds}.
	 * @param limit the requests
	 * @param windowSeconds the window
	 */
	record Quota(long limit, long windowSeconds) {

		double perSecond() {
			return (double) this.limit / this.windowSeconds;
		}

	}

}
