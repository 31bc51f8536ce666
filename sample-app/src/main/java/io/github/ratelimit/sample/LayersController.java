package io.github.ratelimit.sample;

import java.util.List;
import java.util.Map;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.annotation.RateLimited;
import io.github.ratelimit.web.RateLimitStatus;

import org.springframework.http.HttpStatus;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RequestMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;

/**
 * The method layer of docs/layers.md (the filter layer, {@code edge}, and the shared {@code account} quota it draws
 * are in application.yml): per-client limits that pass or fail together, a quota whose limit depends on the
 * client's plan, and a login limit that counts failed attempts only and locks a client out for an hour at the
 * fifth.
 */
@RestController
@RequestMapping("/api/v1")
class LayersController {

	@RateLimited(name = "search-per-ip", limit = 3, window = "2s", algorithm = Algorithm.SLIDING_LOG)
	@RateLimited(name = "search-per-key", limit = 10, window = "1m", algorithm = Algorithm.SLIDING_LOG,
			key = "@apiKeys.issued(#request.getHeader('X-API-Key')) ?: #clientIp")
	@GetMapping("/search")
	Map<String, Object> search(@RequestParam(defaultValue = "") String q) {
		return Map.of("query", q, "results", List.of());
	}

	/**
	 * 3 per minute on the free plan, 10 on pro (application.yml); the plan comes from the API key, and a key this API
	 * did not issue is no key (the client is keyed by its address, on the free plan).
	 */
	@RateLimited(name = "quota", limit = 3, window = "1m", algorithm = Algorithm.SLIDING_LOG,
			key = "@apiKeys.issued(#request.getHeader('X-API-Key')) ?: #clientIp")
	@GetMapping("/quota")
	Map<String, Object> quota(RateLimitStatus status) {
		long remaining = status.limits()
			.stream()
			.filter((limit) -> limit.policy().name().equals("quota"))
			.mapToLong((limit) -> limit.decision().remaining())
			.findFirst()
			.orElse(0);
		return Map.of("plan-limit", status.limits()
			.stream()
			.filter((limit) -> limit.policy().name().equals("quota"))
			.mapToLong((limit) -> limit.policy().limit())
			.findFirst()
			.orElse(0), "remaining", remaining);
	}

	@RateLimited(name = "login", limit = 5, window = "15m", countOn = "401", penalty = "1h")
	@PostMapping("/login")
	ResponseEntity<Map<String, Object>> login(@RequestBody Credentials credentials) {
		if ("demo".equals(credentials.username()) && "demo".equals(credentials.password())) {
			return ResponseEntity.ok(Map.of("user", credentials.username()));
		}
		return ResponseEntity.status(HttpStatus.UNAUTHORIZED).body(Map.of("error", "invalid credentials"));
	}

	record Credentials(String username, String password) {
	}

}
