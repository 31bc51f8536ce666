package io.github.ratelimit.sample;

import java.util.List;
import java.util.Map;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.annotation.RateLimited;

import org.springframework.http.HttpStatus;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RequestMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;

/**
 * Layers of limits on one method, as docs/layers.md describes them: the shared {@code account} quota (defined in
 * application.yml only) drawn by each endpoint, per-client limits that pass or fail together, and a login limit that
 * counts failed attempts only.
 */
@RestController
@RequestMapping("/api/v1")
class LayersController {

	@RateLimited(name = "account")
	@RateLimited(name = "search-per-ip", limit = 3, window = "2s", algorithm = Algorithm.SLIDING_LOG)
	@RateLimited(name = "search-per-key", limit = 10, window = "1m", algorithm = Algorithm.SLIDING_LOG,
			key = "#request.getHeader('X-API-Key')")
	@GetMapping("/search")
	Map<String, Object> search(@RequestParam(defaultValue = "") String q) {
		return Map.of("query", q, "results", List.of());
	}

	@RateLimited(name = "account")
	@RateLimited(name = "login", limit = 5, window = "15m", countOn = "401")
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
