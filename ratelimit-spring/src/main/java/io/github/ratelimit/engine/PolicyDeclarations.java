package io.github.ratelimit.engine;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

import io.github.ratelimit.RateLimitPolicy;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

/**
 * Every declaration of each policy name, checked against the others (declarations of one name share its counters, so
 * they must count alike), and the changes made to them at run time, applied to every declaration alike.
 */
final class PolicyDeclarations {

	private static final Log logger = LogFactory.getLog(PolicyCatalog.class);

	/** Policies by name, with the first declaration of each; guarded by itself. */
	private final Map<String, Declaration> declared = new LinkedHashMap<>();

	/** Every spec of each name (one per declaration), what a change at run time applies to; guarded by declared. */
	private final Map<String, List<PolicySpec>> instances = new LinkedHashMap<>();

	/** The changes made at run time, by policy name; guarded by declared. */
	private final Map<String, List<PolicyValues>> changes = new LinkedHashMap<>();

	/** Whether a policy declared so far settles after the response: counts by outcome, or settles its cost. */
	private volatile boolean settledAfterResponse;

	private record Declaration(String where, @Nullable PolicySpec spec, List<String> declaredBy) {
	}

	/**
	 * Record a declaration of a policy name, checking it against the others.
	 * @param named whether the name was given, rather than the method's default
	 */
	void declare(String name, String where, @Nullable PolicySpec spec, boolean named) {
		synchronized (this.declared) {
			if (spec != null && (spec.countOn() != null || spec.hasSettle() || Concurrency.limits(spec))) {
				this.settledAfterResponse = true;
			}
			if (spec != null) {
				this.instances.computeIfAbsent(name, (n) -> new ArrayList<>()).add(spec);
				List<PolicyValues> change = this.changes.get(name);
				if (change != null) {
					spec.change(change); // declared after the change (a lazy bean, a gateway route): it applies too
				}
			}
			String declaration = PolicyParser.declarationOf(where);
			Declaration existing = this.declared.get(name);
			if (existing == null) {
				List<String> declaredBy = new ArrayList<>();
				declaredBy.add(declaration);
				this.declared.put(name, new Declaration(where, spec, declaredBy));
				return;
			}
			if (!existing.declaredBy().contains(declaration)) {
				existing.declaredBy().add(declaration);
			}
			if (!named && !existing.where().equals(where)) {
				logger.warn(where + " shares the default policy name '" + name + "' (and so its counters) with "
						+ PolicyParser.declarationOf(existing.where())
						+ "; give each a name if they should be counted apart");
			}
			RateLimitPolicy first = (existing.spec() != null) ? existing.spec().policy() : null;
			if (first != null && spec != null && !first.equals(spec.policy())) {
				throw new InvalidRateLimitPolicyException(name, where + ": policy '" + name + "' is also declared by "
						+ PolicyParser.declarationOf(existing.where()) + " with different settings ("
						+ first.describe() + " there, " + spec.policy().describe() + " here); methods that share a "
						+ "policy name share its counters and must declare the same limit, window, algorithm and "
						+ "burst");
			}
		}
	}

	/** Every enabled policy, the first declaration of each name, in the order declared. */
	List<PolicySpec> policies() {
		synchronized (this.declared) {
			return this.declared.values().stream().map(Declaration::spec).filter((spec) -> spec != null).toList();
		}
	}

	@Nullable PolicySpec policy(String name) {
		synchronized (this.declared) {
			Declaration declaration = this.declared.get(name);
			return (declaration != null) ? declaration.spec() : null;
		}
	}

	boolean change(String name, List<PolicyValues> change) {
		synchronized (this.declared) {
			List<PolicySpec> specs = this.instances.get(name);
			if (specs == null || specs.isEmpty()) {
				return false;
			}
			// Checked on one declaration first, so that an invalid change leaves every declaration as it was.
			specs.get(0).checkChange(change);
			specs.forEach((spec) -> spec.change(change));
			if (change.stream().allMatch((values) -> values.values().isEmpty())) {
				this.changes.remove(name);
			}
			else {
				this.changes.put(name, List.copyOf(change));
			}
			return true;
		}
	}

	boolean checkChange(String name, List<PolicyValues> change) {
		synchronized (this.declared) {
			List<PolicySpec> specs = this.instances.get(name);
			if (specs == null || specs.isEmpty()) {
				return false;
			}
			specs.get(0).checkChange(change);
			return true;
		}
	}

	Map<String, List<PolicyValues>> changes() {
		synchronized (this.declared) {
			return Map.copyOf(this.changes);
		}
	}

	/** The names of every declared policy that can be changed, the disabled ones included. */
	List<String> names() {
		synchronized (this.declared) {
			return List.copyOf(this.instances.keySet());
		}
	}

	List<String> declaredBy(String name) {
		synchronized (this.declared) {
			Declaration declaration = this.declared.get(name);
			return (declaration != null) ? List.copyOf(declaration.declaredBy()) : List.of();
		}
	}

	boolean settledAfterResponse() {
		return this.settledAfterResponse;
	}

	/** The names declared so far, sorted. */
	Set<String> knownNames() {
		synchronized (this.declared) {
			return new TreeSet<>(this.declared.keySet());
		}
	}

}
