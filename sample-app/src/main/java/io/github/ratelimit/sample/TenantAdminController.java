package io.github.ratelimit.sample;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.Map;
import java.util.regex.Pattern;

import io.github.ratelimit.annotation.RateLimited;
import io.github.ratelimit.engine.RateLimitTenants;
import org.jspecify.annotations.Nullable;

import org.springframework.http.HttpStatus;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PutMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RequestHeader;
import org.springframework.web.bind.annotation.RequestMapping;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.server.ResponseStatusException;

/**
 * Changes a tenant's limit: {@code PUT /admin/tenants/{tenant}} with {@code {"limit": N}}, for requests carrying
 * {@code X-Admin-Token} equal to {@code sample.admin-token}. The change is written to the tenants table, and the
 * tenant's cached limits are evicted, so its next request sees the new limit, its count in the window carried over.
 * Ten requests of a client address without the token or with a wrong one in 15 minutes, and it may try no more.
 */
@RestController
@RequestMapping("/admin/tenants")
class TenantAdminController {

	private static final Pattern TENANT = Pattern.compile("[a-z0-9][a-z0-9-]{0,63}");

	private static final long MAX_LIMIT = 1_000_000;

	private final Tenants tenants;

	private final RateLimitTenants rateLimitTenants;

	private final byte @Nullable [] adminToken;

	TenantAdminController(Tenants tenants, RateLimitTenants rateLimitTenants, SampleProperties properties) {
		this.tenants = tenants;
		this.rateLimitTenants = rateLimitTenants;
		this.adminToken = (properties.adminToken() != null)
				? properties.adminToken().getBytes(StandardCharsets.UTF_8) : null;
	}

	@PutMapping("/{tenant}")
	@RateLimited(name = "admin-attempts", limit = 10, window = "15m", countOn = { "401", "403" },
			description = "Requests without the admin token or with a wrong one, per client address: the token "
					+ "cannot be guessed at the server's speed")
	Map<String, Object> setLimit(@PathVariable String tenant, @RequestBody LimitChange change,
			@RequestHeader(name = "X-Admin-Token", required = false) @Nullable String token) {
		authorize(token);
		if (!TENANT.matcher(tenant).matches()) {
			throw new ResponseStatusException(HttpStatus.BAD_REQUEST,
					"A tenant is 1 to 64 lower-case letters, digits and dashes");
		}
		if (change.limit() == null || change.limit() < 1 || change.limit() > MAX_LIMIT) {
			throw new ResponseStatusException(HttpStatus.BAD_REQUEST,
					"'limit' must be a whole number from 1 to " + MAX_LIMIT);
		}
		this.tenants.setReportsPerMinute(tenant, change.limit());
		this.rateLimitTenants.evict(tenant);
		return Map.of("tenant", tenant, "limit", change.limit());
	}

	/** 401 without a token, 403 with a wrong one, or when no token is configured: nobody may change limits. */
	private void authorize(@Nullable String token) {
		if (this.adminToken == null) {
			throw new ResponseStatusException(HttpStatus.FORBIDDEN, "The admin endpoints are off: set sample.admin-token");
		}
		if (token == null) {
			throw new ResponseStatusException(HttpStatus.UNAUTHORIZED, "X-Admin-Token is required");
		}
		if (!MessageDigest.isEqual(this.adminToken, token.getBytes(StandardCharsets.UTF_8))) {
			throw new ResponseStatusException(HttpStatus.FORBIDDEN, "X-Admin-Token is not the admin token");
		}
	}

	/**
	 * The body of a change.
	 * @param limit the tenant's new limit of reports per minute
	 */
	record LimitChange(@Nullable Long limit) {
	}

}
