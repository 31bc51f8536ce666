package io.github.ratelimit.sample;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.annotation.RateLimited;

import org.springframework.http.HttpStatus;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RequestMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.server.ResponseStatusException;

/**
 * Exports rows, limited by the rows exported: 1,000 a minute per client IP, a token bucket. How many rows an export
 * yields is known only once it has run, so each request reserves 100 and is settled to the rows it exported: a small
 * export gives back the rest, a large one takes the extra, and a client that exported more than its share waits
 * until the refill has repaid the debt.
 */
@RestController
@RequestMapping("/api/v1")
class ExportController {

	private static final int MAX_ROWS = 5_000;

	@GetMapping("/exports")
	@RateLimited(name = "exports", algorithm = Algorithm.TOKEN_BUCKET, limit = 1_000, window = "1m", cost = "100",
			settle = "#result.rows()",
			description = "Rows exported per client IP: 100 reserved per request, settled to the rows exported")
	Export export(@RequestParam(defaultValue = "10") int rows) {
		if (rows < 0 || rows > MAX_ROWS) {
			throw new ResponseStatusException(HttpStatus.BAD_REQUEST, "'rows' must be from 0 to " + MAX_ROWS);
		}
		// A real export would stream the rows of a query; what counts is how many there turned out to be.
		return new Export(rows, "rows 1 to " + rows);
	}

	/**
	 * An export.
	 * @param rows how many rows it holds
	 * @param data the rows
	 */
	record Export(int rows, String data) {
	}

}
