package io.github.ratelimit.sample;

import java.util.List;
import java.util.Map;

import io.github.ratelimit.annotation.RateLimited;

import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.RequestMapping;
import org.springframework.web.bind.annotation.RestController;

/**
 * Reports of a tenant, limited per tenant by the tenant's own limit per minute, from the tenants table (a tenant not
 * in it has the policy's limit, 2 a minute).
 */
@RestController
@RequestMapping("/api/v1/tenants")
class TenantController {

	@GetMapping("/{tenant}/reports")
	@RateLimited(name = "reports", limit = 2, window = "1m", key = "#tenant", tenant = "#tenant",
			description = "Reports per tenant, each tenant's own limit from the tenants table")
	Map<String, Object> reports(@PathVariable String tenant) {
		return Map.of("tenant", tenant, "reports", List.of("usage", "billing"));
	}

}
