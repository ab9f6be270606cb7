% A differentially private mean of records in the public box [-15, 15]^d (blobs-2d's), audited through dpaudit's
% protocol for programs (docs/executables.md): JSON lines on stdin and stdout.  Each coordinate of the mean of the
% clipped records gets Laplace noise of scale d (HI - LO) / (n epsilon): the L1 sensitivity of the mean when one
% record is replaced, so it is epsilon-DP under --neighbours replace.  With --broken the scale is 10 times too small.
%
%   dpaudit estimate-eps -m "cmd:octave-cli --no-gui --quiet examples/executables/dp_mean.m" --eps 1 --neighbours replace
%   dpaudit estimate-eps -m "cmd:octave-cli --no-gui --quiet examples/executables/dp_mean.m --broken" --eps 1 ...
% Octave 7 or later (jsondecode, jsonencode); Debian: apt-get install octave.
LO = -15;
HI = 15;
broken = any(strcmp(argv(), "--broken"));
names = {"dp_mean", "dp_mean_broken"};
printf("{\"protocol\": \"dpaudit/1\", \"output\": \"vector\", \"name\": \"%s\"}\n", names{1 + broken});
fflush(stdout);
while true
  try  % input(), not fgetl: on a pipe fgetl waits for the next line's first byte before it returns a line
    line = input("", "s");
  catch  % stdin closed: the auditor is done
    break;
  end
  req = jsondecode(line);
  X = min(max(reshape(req.data, req.n, req.d), LO), HI);
  records = max(req.n, 1);
  mu = sum(X, 1) / records;
  scale = req.d * (HI - LO) / (records * req.epsilon) / (1 + 9 * broken);
  releases = cell(numel(req.seeds), 1);
  for i = 1:numel(req.seeds)
    rand("twister", mod(req.seeds(i), 2^32));  % the seed dpaudit sent for release i
    releases{i} = mu + scale * log(rand(1, req.d) ./ rand(1, req.d));
  end
  printf("%s\n", jsonencode(struct("releases", {releases}), "PrettyPrint", false));
  fflush(stdout);
end
