//! `asdftool`: inspect ASDF files from the command line.
//!
//! ```text
//! asdftool info FILE [--blocks]     tree outline with array summaries (reads no block data)
//! asdftool canonical FILE           the file's asdf-canonical/1 JSON
//! asdftool defragment IN -o OUT [-c CODEC]   rewrite compactly, all blocks internal
//! asdftool explode IN -o OUT         tree file plus one file per block
//! asdftool implode IN -o OUT         bring external blocks back in
//! asdftool to-yaml IN -o OUT         every array inline
//! asdftool convert IN OUT [-c CODEC] [--array PATH] [--verify-checksums]
//!                                    between ASDF and Blosc2, HDF5, FITS (by extension)
//! asdftool validate FILE [--schema URI_OR_PATH] [--no-checksums]
//!                                    tree against its schemas, block checksums
//! asdftool check-schemas DIR         schema files: metaschema, $refs, defaults, examples
//! asdftool diff A B [-i PATH]... [--rtol X] [--atol X] [--tags]
//!                                    differences by tree path; exit 1 when they differ
//! asdftool search FILE [PATTERN] [-t TYPE] [-v VALUE]   nodes by key, type or value
//! asdftool extract FILE PATH -o OUT.npy|OUT.asdf [--slice SEL]
//!                                    one array (or a region of it) or subtree on its own
//! asdftool preview FILE [PATH] -o OUT.png|OUT.svg [--stretch S] [--slice I,J]
//!                                    an image (zscale) of a 2-D array, a plot of a 1-D one
//! asdftool manifest FILE [PATH] [--json]                each array's independently readable pieces
//! asdftool references FILE... -o REFS.json [--stack NAME]  a kerchunk reference set (zarr)
//! asdftool edit FILE                 the tree in $EDITOR, validated, written back safely
//! asdftool tags [FILE]               tags used and what validates them
//! asdftool schema TAG                a bundled schema's text
//! asdftool view FILE|DIR [--port N] [--bind ADDR]      a read-only web page of the file(s)
//! asdftool completions SHELL | man [--dir DIR]           generated from these definitions
//! ```
//!
//! Exit status: 0 success, 1 problems found (differences, validation problems, no match),
//! 2 usage or I/O error or an unreadable file. `-q`/`--quiet` silences the progress shown on
//! a terminal for files of 256 MiB or more.
//!
//! Every command that writes ASDF (defragment, explode, implode, to-yaml, convert, extract,
//! edit) takes `--portable`: refuse blocks python asdf 6.0.0 reads only with a plugin;
//! without it such a write warns once per codec on standard error.
//!
//! Every command that reads follows external array sources and `$ref`s to other files only
//! inside the input file's folder; `--external none|same-folder|any` and `--allow-dir DIR`
//! (repeatable) change that.

#![forbid(unsafe_code)]

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use asdf_core::{AsdfFile, ExternalPolicy};
use clap::{Args, CommandFactory, Parser, Subcommand, ValueEnum};

// The commands: each imports only from the format converters and the shared modules below,
// never from another command.
mod check_schemas;
mod codegen;
mod convert;
mod diff;
mod edit;
mod extract;
mod info;
mod manifest;
mod preview;
mod references;
mod search;
mod tags;
mod validate;
mod view;
// The formats `convert` reads and writes besides ASDF (FITS is read by asdf-core itself).
mod blosc2;
#[cfg(feature = "hdf5")]
mod hdf5;
// Shared by the commands; they import no command module.
mod fits;
mod output;
mod progress;
mod summary;
mod tree;
mod tree_json;

/// The exit statuses, shown after `--help`.
const EXIT_STATUS: &str = "\
Exit status:
  0  success (diff: the files are equal; search: something matched)
  1  problems found: diff: the files differ; validate, check-schemas: problems listed;
     search: nothing matched; edit: no change made or the edit abandoned
  2  usage error, I/O error, or a file that cannot be read";

#[derive(Parser)]
#[command(
    name = "asdftool",
    version,
    about = "Inspect ASDF (Advanced Scientific Data Format) files",
    after_help = EXIT_STATUS
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
    #[command(flatten)]
    access: Access,
    /// No progress display (shown on a terminal for files of 256 MiB or more) and no
    /// "wrote ..." messages.
    #[arg(short, long, global = true)]
    quiet: bool,
}

/// Which other files a file being read may lead to (external array sources, `$ref`s).
#[derive(Args, Clone, Debug)]
pub(crate) struct Access {
    /// Other files that external array sources and `$ref`s may open: none, those inside the
    /// input file's folder (and its subfolders, after `..` and symbolic links are resolved),
    /// or any local path (only for files you trust).
    #[arg(long, global = true, value_enum, default_value_t = External::SameFolder)]
    external: External,
    /// Also allow files inside this folder (repeatable; with --external same-folder).
    #[arg(long = "allow-dir", global = true, value_name = "DIR")]
    allow_dirs: Vec<PathBuf>,
}

/// What every command that writes ASDF takes.
#[derive(Args, Clone, Copy, Debug, Default)]
pub(crate) struct WriteFlags {
    /// Refuse to write a block python asdf 6.0.0 reads only with a plugin (zstd, lz4f, blsc,
    /// bls2) or not at all (bsc2, xz), before any byte is written: one line naming the block
    /// and codec, exit status 2. Without it such a write succeeds and says so once per codec
    /// on standard error (README: Compression labels).
    #[arg(long)]
    pub(crate) portable: bool,
}

#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
enum External {
    None,
    SameFolder,
    Any,
}

impl Access {
    /// Opens `path` under this policy; errors as one line naming the file.
    pub(crate) fn open(&self, path: &Path) -> Result<AsdfFile, String> {
        // s3://, gs://, az://, http(s):// through asdf-store; credentials, region, endpoint
        // and AWS_SKIP_SIGNATURE=true (public buckets) from the environment. Relative
        // references are read from the same store, within the URL's folder (`--external any`:
        // anywhere in that store; `--external none`: not at all); never a local file.
        #[cfg(feature = "remote")]
        if let Some(url) = path.to_str().filter(|p| asdf_store::is_url(p)) {
            let store =
                asdf_store::StoreOptions::default().allow_escape(self.external == External::Any);
            let opened = match self.external {
                External::None => asdf_store::StoreReader::open(url, &store).and_then(|r| {
                    asdf_store::open_reader(std::sync::Arc::new(r), &AsdfFile::options())
                }),
                _ => asdf_store::open_url_with(url, &store, &AsdfFile::options()),
            };
            return opened.map_err(|e| format!("{url}: {}", chain(&e)));
        }
        let policy = match self.external {
            External::None => ExternalPolicy::None,
            External::Any => ExternalPolicy::AnyPath,
            External::SameFolder if self.allow_dirs.is_empty() => ExternalPolicy::SameFolder,
            External::SameFolder => {
                let folder = match path.parent() {
                    Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
                    _ => PathBuf::from("."),
                };
                ExternalPolicy::Roots(
                    std::iter::once(folder)
                        .chain(self.allow_dirs.iter().cloned())
                        .collect(),
                )
            }
        };
        AsdfFile::options()
            .external_policy(policy)
            .open(path)
            // an error of opening a file by path names the file itself (Error::File, or
            // Error::Io's own path)
            .map_err(|e| chain(&e))
    }
}

#[derive(Subcommand)]
enum Command {
    /// Print the tree as an outline with array summaries; reads no block data.
    Info {
        /// The ASDF file.
        file: PathBuf,
        /// Also list the block headers.
        #[arg(long)]
        blocks: bool,
        /// Show at most this many lines of the tree (0: all).
        #[arg(long, default_value_t = 0)]
        max_rows: usize,
        /// Print the outline as JSON: the file, its versions, the tree (each node's kind,
        /// tag and value; arrays by datatype, shape, storage) and with --blocks the blocks.
        #[arg(long, conflicts_with = "max_rows")]
        json: bool,
    },
    /// Print the file's canonical JSON (asdf-canonical/1): tree, tags, array hashes.
    Canonical {
        /// The ASDF file.
        file: PathBuf,
    },
    /// Rewrite a file compactly: every block internal, no unused space.
    Defragment {
        /// The input file (only read).
        input: PathBuf,
        /// The output file.
        #[arg(short, long)]
        output: PathBuf,
        /// Compression for every block: zlib, bzp2, lz4, zstd, lz4f, blsc, bsc2, bls2 or none
        /// (default: keep each block's).
        #[arg(short, long)]
        compress: Option<String>,
        /// ASDF Standard version to write: 1.0.0 to 1.7.0 (default 1.6.0, or the input's when
        /// later; 1.7.0 is still in development, python asdf reads it with
        /// ASDF_UNSTABLE_CORE_SCHEMAS=1).
        #[arg(long, value_name = "VERSION")]
        standard: Option<String>,
        #[command(flatten)]
        write: WriteFlags,
    },
    /// Write the tree to OUT and each block to its own file beside it (OUT0000.asdf, ...).
    Explode {
        /// The input file (only read).
        input: PathBuf,
        /// The output file.
        #[arg(short, long)]
        output: PathBuf,
        /// ASDF Standard version to write: 1.0.0 to 1.7.0 (default 1.6.0, or the input's when
        /// later; 1.7.0 is still in development, python asdf reads it with
        /// ASDF_UNSTABLE_CORE_SCHEMAS=1).
        #[arg(long, value_name = "VERSION")]
        standard: Option<String>,
        #[command(flatten)]
        write: WriteFlags,
    },
    /// Bring the blocks of an exploded file back into one file.
    Implode {
        /// The input file (only read).
        input: PathBuf,
        /// The output file.
        #[arg(short, long)]
        output: PathBuf,
        /// ASDF Standard version to write: 1.0.0 to 1.7.0 (default 1.6.0, or the input's when
        /// later; 1.7.0 is still in development, python asdf reads it with
        /// ASDF_UNSTABLE_CORE_SCHEMAS=1).
        #[arg(long, value_name = "VERSION")]
        standard: Option<String>,
        #[command(flatten)]
        write: WriteFlags,
    },
    /// Write a pure-YAML version of the file: every array inline.
    #[command(name = "to-yaml", alias = "to_yaml")]
    ToYaml {
        /// The input file (only read).
        input: PathBuf,
        /// The output file.
        #[arg(short, long)]
        output: PathBuf,
        /// ASDF Standard version to write: 1.0.0 to 1.7.0 (default 1.6.0, or the input's when
        /// later; 1.7.0 is still in development, python asdf reads it with
        /// ASDF_UNSTABLE_CORE_SCHEMAS=1).
        #[arg(long, value_name = "VERSION")]
        standard: Option<String>,
        #[command(flatten)]
        write: WriteFlags,
    },
    /// Convert between formats, chosen by extension: ASDF (.asdf), Blosc2 (.b2nd, .b2frame),
    /// HDF5 (.h5, .hdf5, .he5, .nc) and ASDF in FITS (.fits, read only). One side is ASDF.
    Convert {
        /// The input file (only read).
        input: PathBuf,
        /// The output file (written atomically).
        output: PathBuf,
        /// Compression of the output: for ASDF zlib, bzp2, lz4, zstd, lz4f, blsc, bsc2, bls2
        /// or none (default: bsc2 from Blosc2, each block's own from ASDF); for Blosc2 zstd
        /// (default), lz4 or zlib.
        #[arg(short, long)]
        compress: Option<String>,
        /// From ASDF: the array to write, as a JSON pointer into the tree (`/data`); needed
        /// when the output format holds one array and the file has several.
        #[arg(long, value_name = "PATH")]
        array: Option<String>,
        /// From ASDF to HDF5: verify every block's MD5 checksum while it is read (large
        /// arrays as they stream); a mismatch fails the conversion, naming the block, and
        /// leaves no output.
        #[arg(long)]
        verify_checksums: bool,
        /// Between HDF5 and ASDF: refuse a file with a dataset or attribute that has no form
        /// yet on the other side (without it, such a one is left out, listed on a line of
        /// its own, from HDF5 also under `_hdf5/left_out`, and the exit status is 1).
        #[arg(long)]
        strict: bool,
        /// To ASDF: the ASDF Standard version to write, 1.0.0 to 1.7.0 (default 1.6.0, or
        /// an ASDF input's when later; 1.7.0 is still in development, python asdf reads it
        /// with ASDF_UNSTABLE_CORE_SCHEMAS=1).
        #[arg(long)]
        standard: Option<String>,
        #[command(flatten)]
        write: WriteFlags,
    },
    /// Validate the tree against its schemas (the standard's, per tag) and verify every
    /// block's checksum; exit status 1 and one line per problem when invalid.
    Validate {
        /// The ASDF file.
        file: PathBuf,
        /// Also validate the root against this schema: a YAML schema file, or the URI of a
        /// bundled schema.
        #[arg(long, value_name = "URI_OR_PATH")]
        schema: Option<String>,
        /// Do not verify block checksums.
        #[arg(long)]
        no_checksums: bool,
    },
    /// Check the YAML schemas under a folder: each parses, satisfies its metaschema
    /// (`$schema`), resolves its `$ref`s (bundled schemas or schemas of the folder) and has
    /// valid defaults, and every example of its `examples` list validates against it; exit
    /// status 1 and one line per problem (file, example, tree path) otherwise.
    #[command(name = "check-schemas")]
    CheckSchemas {
        /// The folder (searched with its subfolders for .yaml and .yml files).
        dir: PathBuf,
    },
    /// Generate Rust types with `#[derive(AsdfType)]` from ASDF schemas (and manifests, for
    /// their tags): one type per schema, the newest version of each; one line on standard
    /// error per schema or property not mapped faithfully (kept as `Node`).
    Codegen {
        /// Schema files, or folders searched with their subfolders for .yaml and .yml files.
        #[arg(required = true)]
        inputs: Vec<PathBuf>,
        /// The Rust file to write.
        #[arg(short, long, value_name = "OUT.rs")]
        output: PathBuf,
        /// Every version of each schema, each version in its own module (`v2_2_0::Name`).
        #[arg(long)]
        all_versions: bool,
        /// Arrays as `asdf_core::convert::LazyArray` (read on demand) instead of ndarrays.
        #[arg(long)]
        lazy_arrays: bool,
    },
    /// Report the differences of two files' trees and array values, one line per differing
    /// path (`PATH: what`); exit status 0 when equal, 1 when they differ.
    ///
    /// Leaves compare by value (tags ignored unless --tags); a key in one file only is
    /// reported at its path; arrays compare their values: arrays with the same values are
    /// equal whatever their layout (byte order, strides, inline or in a block, compression),
    /// others have their descriptors compared and a line saying whether shape, datatype or
    /// contents differ.
    Diff {
        /// The first file.
        first: PathBuf,
        /// The second file.
        second: PathBuf,
        /// A path not to compare, with its subtree: a JSON pointer in which `*` matches any
        /// key or index (`/frames/*/reference_frame`), or python's form
        /// (`frames[*].reference_frame`, `[asdf_library,history]`). Repeatable.
        #[arg(short, long, value_name = "PATH")]
        ignore: Vec<String>,
        /// Relative tolerance of array elements: equal when |a - b| <= atol + rtol * |b|.
        #[arg(long, default_value_t = 0.0)]
        rtol: f64,
        /// Absolute tolerance of array elements.
        #[arg(long, default_value_t = 0.0)]
        atol: f64,
        /// Also report differing tags (`!unit/unit-1.0.0 m` vs `m`).
        #[arg(long)]
        tags: bool,
    },
    /// Find nodes by key, type or value (as python asdf's `AsdfFile.search`): one line per
    /// match (`PATH TYPE: VALUE`); exit status 1 when nothing matches.
    Search {
        /// The ASDF file.
        file: PathBuf,
        /// A regular expression searched in each node's key (or sequence index).
        pattern: Option<String>,
        /// The same as PATTERN (python's `--key`).
        #[arg(short, long, value_name = "PATTERN", conflicts_with = "pattern")]
        key: Option<String>,
        /// A regular expression searched in the node's type: its tag (`core/ndarray`,
        /// `unit/quantity-1.1.0`), `ndarray`, or its kind (`mapping`/`dict`,
        /// `sequence`/`list`, `string`/`str`, `integer`/`int`, `float`, `boolean`/`bool`,
        /// `null`, `timestamp`, `binary`).
        #[arg(short, long = "type", value_name = "T")]
        type_: Option<String>,
        /// A value: a number, `true`, `false` or `null` compares equal (1 matches 1.0);
        /// anything else is a regular expression searched in each scalar's text.
        #[arg(short, long, value_name = "V")]
        value: Option<String>,
    },
    /// Write one node of the tree to its own file: an array as numpy's `.npy`, or any
    /// subtree (its arrays included) as a new `.asdf` file. Written atomically. With
    /// --slice, only a region of an array is read (from a file or a URL) and written.
    Extract {
        /// The input file (only read).
        input: PathBuf,
        /// The node: a JSON pointer (`/sci`, `/frames/0`) or python's form (`frames[0]`).
        path: String,
        /// The output file: `.npy` or `.asdf`.
        #[arg(short, long)]
        output: PathBuf,
        /// Only this region of the array, in numpy's slice syntax: per axis an index
        /// (`-1`: the axis is dropped) or `start:stop:step` (each optional, negative counts
        /// from the end, a negative step walks backwards), at most one `...` for the axes
        /// not named; axes left out are whole. `100:228, 2000:2256`, `::4, :`, `..., 0`.
        /// Only the bytes holding the region are read where the codec allows. To .npy: the
        /// region's data (as for a whole array, a mask is not written); to .asdf: the region
        /// under the array's key, compressed with its block's codec, with the same region
        /// of its mask. A selection that does not fit the array exits with status 2.
        #[arg(long, value_name = "SEL", allow_hyphen_values = true)]
        slice: Option<String>,
        /// To .asdf: the ASDF Standard version to write, 1.0.0 to 1.7.0 (default 1.6.0, or
        /// the input's when later).
        #[arg(long)]
        standard: Option<String>,
        #[command(flatten)]
        write: WriteFlags,
    },
    /// Draw an array: a 2-D array (or one plane of a larger one, --slice) as an image with
    /// zscale limits (astropy's ZScaleInterval) by default, row 0 at the bottom, NaN,
    /// infinite and masked pixels in the colour map's bad colour, reduced to at most
    /// --max-size pixels a side; a 1-D array as a line plot; a table (record array) as a
    /// plot of --y against --x. PNG or SVG by the output's extension. Strings, or no array at
    /// PATH, exit with status 2. docs/preview.md.
    Preview {
        /// The input file (ASDF, or FITS with an ASDF extension).
        input: PathBuf,
        /// The array: a JSON pointer (`/sci`) or python's form (`sci`, `frames[0]`); a
        /// quantity or table column draws its values. Default: the first array of two or
        /// more dimensions, else the first array.
        path: Option<String>,
        /// The output file: `.png` or `.svg`.
        #[arg(short, long)]
        output: PathBuf,
        /// The limits of an image.
        #[arg(long, value_enum, default_value_t = preview::IntervalArg::Zscale)]
        interval: preview::IntervalArg,
        /// Limits holding the central P percent of the values (astropy's
        /// PercentileInterval), in place of --interval.
        #[arg(long, value_name = "P")]
        percent: Option<f64>,
        /// The stretch of an image, as astropy.visualization's.
        #[arg(long, value_enum, default_value_t = preview::StretchArg::Linear)]
        stretch: preview::StretchArg,
        /// The colour map: grey, viridis, inferno, heat or cool.
        #[arg(long, default_value = "grey", value_name = "NAME")]
        cmap: String,
        /// The plane of an array of 3 or more dimensions: its leading indices, as `2` or
        /// `2,0` (missing ones are 0; default the first plane).
        #[arg(long, value_name = "I,J")]
        slice: Option<String>,
        /// The largest side of an image in pixels; larger arrays are block-averaged (planes
        /// over 64 MiB read strided, only the rows and columns drawn).
        #[arg(long, default_value_t = 1024, value_name = "N")]
        max_size: usize,
        /// A table's column for the horizontal axis (default: the row number).
        #[arg(long, value_name = "COL")]
        x: Option<String>,
        /// A table's column for the vertical axis (default: its first numeric column).
        #[arg(long, value_name = "COL")]
        y: Option<String>,
    },
    /// List each array's independently readable pieces (or PATH's): the file holding each,
    /// its byte range, codec, the decoded bytes of its block it yields and the region of the
    /// array it holds. Uncompressed blocks are cut into slabs of whole rows; python asdf's
    /// lz4 sub-blocks and Blosc2 chunks are pieces of their own; other codecs give the
    /// whole block. Reads no array data.
    Manifest {
        /// The ASDF file.
        file: PathBuf,
        /// The array: a JSON pointer (`/sci`) or python's form (`frames[0].data`); default
        /// every array.
        path: Option<String>,
        /// Print JSON: the file and, per array, path, datatype, numpy dtype, shape, zarr
        /// chunk shape (or null) and pieces (source `file`, `external` with its `uri`,
        /// `inline` or `repeat` with its `pattern`; offset, length, codec, decoded
        /// `[start, end]`, region as `[start, end]` per axis or null).
        #[arg(long)]
        json: bool,
        /// Bytes per slab of an uncompressed block (whole rows, at least one).
        #[arg(long, value_name = "N", default_value_t = 8 << 20)]
        slab_bytes: u64,
    },
    /// Write a kerchunk reference set (version 1 JSON, read by fsspec's ReferenceFileSystem)
    /// showing the file as zarr (format 2): every array at its tree path, its chunks the
    /// manifest's pieces where they form a regular grid, else its whole block as one chunk,
    /// else (views with offset or strides, inline data) its bytes inlined; the tree's
    /// scalars as attributes of their groups. Chunk references name FILE as given: give an
    /// absolute path or a URL when they are read from elsewhere. Codecs numcodecs lacks
    /// (lz4f, Blosc2, partial lz4 chunks) need `import asdf_rs.codecs` before zarr opens
    /// them.
    References {
        /// The ASDF file (several with --stack).
        #[arg(required = true)]
        files: Vec<PathBuf>,
        /// The reference file to write (atomically).
        #[arg(short, long)]
        output: PathBuf,
        /// Stack the arrays of the files (same paths, shapes, datatypes and chunks) along a
        /// new first axis named NAME; the root group's attribute NAME lists the files.
        #[arg(long, value_name = "NAME")]
        stack: Option<String>,
        /// Bytes per chunk of an uncompressed block at most (whole rows, a divisor of the
        /// first axis, at least one row).
        #[arg(long, value_name = "N", default_value_t = 8 << 20)]
        slab_bytes: u64,
    },
    /// Edit the tree in $VISUAL or $EDITOR (default vi). On save it is parsed and validated
    /// and written back: in place when the blocks stay and it fits (journaled), else the
    /// whole file rewritten atomically. A bad edit reopens with the error at its top; quit
    /// without saving to abandon (exit status 1, file untouched).
    Edit {
        /// The ASDF file.
        file: PathBuf,
        #[command(flatten)]
        write: WriteFlags,
    },
    /// List the tags a file uses, with how many nodes carry each and what validates them
    /// under the file's standard (a bundled schema, or nothing); without FILE, every tag
    /// of a standard and its schema.
    Tags {
        /// The ASDF file.
        file: Option<PathBuf>,
        /// The ASDF Standard version to judge by (default: the file's; without FILE the
        /// newest).
        #[arg(long, value_name = "VERSION")]
        standard: Option<String>,
    },
    /// Serve a read-only web page of FILE (or of the ASDF, FITS, HDF5 and Blosc2 files in
    /// DIR): the tree as a collapsible outline with search, array summaries and statistics,
    /// image previews and plots, FITS HDUs. Nothing outside FILE or DIR is served. Prints
    /// `serving ... at http://ADDR:PORT/` and runs until stopped (Ctrl-C). docs/view.md.
    View {
        /// The file, or a folder of files.
        target: PathBuf,
        /// The port (0: any free port, printed).
        #[arg(long, default_value_t = 8765)]
        port: u16,
        /// The address to listen on: 127.0.0.1 (this machine only) unless another is given.
        #[arg(long, value_name = "ADDR", default_value = "127.0.0.1")]
        bind: std::net::IpAddr,
    },
    /// Print a completion script for a shell (bash, zsh, fish, elvish, powershell), made from
    /// this program's own definitions: `asdftool completions bash > ~/.local/share/bash-completion/completions/asdftool`.
    Completions {
        /// The shell.
        shell: clap_complete::Shell,
    },
    /// Print the manual page (roff, section 1) made from this program's own definitions:
    /// `asdftool man | man -l -`. With --dir, write asdftool.1 and one page per command
    /// (asdftool-diff.1, ...) into that folder.
    Man {
        /// The folder for the pages (created when missing).
        #[arg(long, value_name = "DIR")]
        dir: Option<PathBuf>,
    },
    /// Print a bundled schema: by tag (`core/ndarray-1.1.0`, `tag:stsci.edu:asdf/...`, or
    /// `core/ndarray` for the newest version) or by id (`http://stsci.edu/schemas/...`).
    Schema {
        /// The tag or schema id.
        tag: String,
        /// The ASDF Standard version whose schema for the tag to print (default: the
        /// newest that has one).
        #[arg(long, value_name = "VERSION")]
        standard: Option<String>,
    },
}

/// How a command ends, besides success with its output.
pub(crate) enum Failure {
    /// Problems found (exit status 1): differences, validation problems. The text goes to
    /// standard output when `to_stdout`, else to standard error.
    Problems { text: String, to_stdout: bool },
    /// A usage or I/O error, or a file that cannot be read (exit status 2).
    Error(String),
}

impl From<String> for Failure {
    fn from(msg: String) -> Self {
        Failure::Error(msg)
    }
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    progress::set_quiet(cli.quiet);
    // commands whose only output on success is a report of what they wrote
    let informational = matches!(
        cli.command,
        Command::Defragment { .. }
            | Command::Explode { .. }
            | Command::Implode { .. }
            | Command::ToYaml { .. }
            | Command::Convert { .. }
            | Command::Extract { .. }
            | Command::Preview { .. }
            | Command::References { .. }
            | Command::Edit { .. }
    );
    let access = &cli.access;
    let result: Result<String, Failure> = match cli.command {
        Command::Info {
            file,
            blocks,
            max_rows,
            json,
        } => if json {
            info::run_json(access, &file, blocks)
        } else {
            info::run(access, &file, blocks, max_rows)
        }
        .map_err(Failure::from),
        Command::Canonical { file } => access
            .open(&file)
            .and_then(|f| {
                let (_bar, feed) = progress::Progress::fed(
                    progress::largest(&[&file]),
                    format!("hashing the arrays of {}", file.display()),
                );
                let json = match &feed {
                    Some(feed) => asdf_core::unstable::canonical::to_json_with_progress(&f, feed),
                    None => asdf_core::unstable::canonical::to_json(&f),
                }
                .map_err(|e| format!("{}: {}", file.display(), chain(&e)));
                exit_soon(f);
                json
            })
            .map_err(Failure::from),
        Command::Defragment {
            input,
            output,
            compress,
            standard,
            write,
        } => convert::run(
            access,
            &input,
            &output,
            convert::Mode::Defragment(compress),
            standard.as_deref(),
            write,
        )
        .map_err(Failure::from),
        Command::Explode {
            input,
            output,
            standard,
            write,
        } => convert::run(
            access,
            &input,
            &output,
            convert::Mode::Explode,
            standard.as_deref(),
            write,
        )
        .map_err(Failure::from),
        Command::Implode {
            input,
            output,
            standard,
            write,
        } => convert::run(
            access,
            &input,
            &output,
            convert::Mode::Implode,
            standard.as_deref(),
            write,
        )
        .map_err(Failure::from),
        Command::ToYaml {
            input,
            output,
            standard,
            write,
        } => convert::run(
            access,
            &input,
            &output,
            convert::Mode::ToYaml,
            standard.as_deref(),
            write,
        )
        .map_err(Failure::from),
        Command::Convert {
            input,
            output,
            compress,
            array,
            verify_checksums,
            strict,
            standard,
            write,
        } => convert::convert(
            access,
            &input,
            &output,
            compress,
            array.as_deref(),
            verify_checksums,
            strict,
            standard.as_deref(),
            write,
        ),
        Command::Validate {
            file,
            schema,
            no_checksums,
        } => validate::run(access, &file, schema.as_deref(), !no_checksums),
        Command::CheckSchemas { dir } => check_schemas::run(&dir),
        Command::Codegen {
            inputs,
            output,
            all_versions,
            lazy_arrays,
        } => codegen::run(&inputs, &output, all_versions, lazy_arrays),
        Command::Diff {
            first,
            second,
            ignore,
            rtol,
            atol,
            tags,
        } => {
            let opts = diff::Options {
                ignore: ignore.iter().flat_map(|p| tree::patterns(p)).collect(),
                rtol,
                atol,
                tags,
            };
            match diff::run(access, &first, &second, &opts) {
                Ok(lines) if lines.is_empty() => Ok(String::new()),
                Ok(lines) => Err(Failure::Problems {
                    text: lines.join("\n") + "\n",
                    to_stdout: true,
                }),
                Err(e) => Err(Failure::Error(e)),
            }
        }
        Command::Search {
            file,
            pattern,
            key,
            type_,
            value,
        } => {
            let q = search::Query {
                key: pattern.or(key),
                type_,
                value,
            };
            match search::run(access, &file, &q) {
                Ok(lines) if lines.is_empty() => Err(Failure::Problems {
                    text: String::new(),
                    to_stdout: true,
                }),
                Ok(lines) => Ok(lines.join("\n") + "\n"),
                Err(e) => Err(Failure::Error(e)),
            }
        }
        Command::Extract {
            input,
            path,
            output,
            slice,
            standard,
            write,
        } => extract::run(
            access,
            &input,
            &path,
            &output,
            slice.as_deref(),
            standard.as_deref(),
            write,
        )
        .map_err(Failure::from),
        Command::Preview {
            input,
            path,
            output,
            interval,
            percent,
            stretch,
            cmap,
            slice,
            max_size,
            x,
            y,
        } => preview::run(
            access,
            &preview::Request {
                input: &input,
                path: path.as_deref(),
                output: &output,
                interval,
                percent,
                stretch,
                cmap: &cmap,
                slice: slice.as_deref(),
                max_size,
                x,
                y,
            },
        )
        .map_err(Failure::from),
        Command::Manifest {
            file,
            path,
            json,
            slab_bytes,
        } => manifest::run(access, &file, path.as_deref(), json, Some(slab_bytes))
            .map_err(Failure::from),
        Command::References {
            files,
            output,
            stack,
            slab_bytes,
        } => references::run(access, &files, &output, stack.as_deref(), Some(slab_bytes))
            .map_err(Failure::from),
        Command::Edit { file, write } => edit::run(access, &file, write),
        Command::Tags { file, standard } => {
            tags::run(access, file.as_deref(), standard.as_deref()).map_err(Failure::from)
        }
        Command::View { target, port, bind } => view::run(access, &target, port, bind),
        Command::Completions { shell } => {
            let mut text = Vec::new();
            clap_complete::generate(shell, &mut Cli::command(), "asdftool", &mut text);
            Ok(String::from_utf8_lossy(&text).into_owned())
        }
        Command::Man { dir } => man(dir.as_deref()).map_err(Failure::from),
        Command::Schema { tag, standard } => {
            tags::schema(&tag, standard.as_deref()).map_err(Failure::from)
        }
    };
    match result {
        Ok(text) => {
            if !(informational && progress::quiet()) {
                print_out(&text);
            }
            ExitCode::SUCCESS
        }
        Err(Failure::Problems { text, to_stdout }) => {
            if to_stdout {
                print_out(&text);
            } else {
                eprintln!("asdftool: {}", text.trim_end());
            }
            ExitCode::from(1)
        }
        Err(Failure::Error(msg)) => {
            eprintln!("asdftool: {msg}");
            ExitCode::from(2)
        }
    }
}

/// Writes `text` to standard output; a closed pipe (`| head`) is not an error worth
/// reporting.
fn print_out(text: &str) {
    let mut out = std::io::stdout().lock();
    let _ = out.write_all(text.as_bytes());
    let _ = out.flush();
}

/// The manual page of `asdftool` (to standard output), or with `dir` the pages of
/// `asdftool` and of each command written there.
fn man(dir: Option<&Path>) -> Result<String, String> {
    let cmd = Cli::command();
    let render = |c: clap::Command| -> Result<Vec<u8>, String> {
        let mut page = Vec::new();
        clap_mangen::Man::new(c)
            .render(&mut page)
            .map_err(|e| format!("cannot render the manual page: {e}"))?;
        Ok(page)
    };
    let Some(dir) = dir else {
        return render(cmd).map(|p| String::from_utf8_lossy(&p).into_owned());
    };
    std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let mut written = Vec::new();
    let mut put = |name: String, page: Vec<u8>| -> Result<(), String> {
        let path = dir.join(&name);
        asdf_core::unstable::write_atomically(&path, |f| std::io::Write::write_all(f, &page))
            .map_err(|e| format!("{}: {e}", path.display()))?;
        written.push(path.display().to_string());
        Ok(())
    };
    for sub in cmd.get_subcommands() {
        // clap names are &'static str without its `string` feature; a few bytes, once
        let name: &'static str = Box::leak(format!("asdftool-{}", sub.get_name()).into_boxed_str());
        let bin: &'static str = Box::leak(format!("asdftool {}", sub.get_name()).into_boxed_str());
        put(
            format!("{name}.1"),
            render(
                sub.clone()
                    .name(name)
                    .bin_name(bin)
                    .version(env!("CARGO_PKG_VERSION")),
            )?,
        )?;
    }
    put("asdftool.1".to_string(), render(cmd.clone())?)?;
    Ok(written.iter().map(|w| format!("wrote {w}\n")).collect())
}

/// Lets go of a file read for a command that ends the process right after: its tree is not
/// freed node by node (for a tree of 200,000 nodes that is a tenth of `info`'s time), the
/// process's exit returns the memory at once.
pub(crate) fn exit_soon<T>(value: T) {
    std::mem::forget(value);
}

/// An error and its causes on one line.
pub(crate) fn chain(err: &(dyn std::error::Error + 'static)) -> String {
    asdf_core::display_chain(err)
}
